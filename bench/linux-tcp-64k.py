#!/usr/bin/env python3
"""Measure real Linux TCP in the setting of `scenarios/linux-timers-64k.toml`.

1,000 transfers of 64 KB, one after another on new connections, from a sender to a
receiver in two network namespaces joined by a veth pair: the sender's side shaped to
1 Gbit/s (a token bucket), 2% of its data segments and SYNs dropped at random as they
reach the receiver (nftables' `numgen random`, ACKs kept), `rto_min 5ms` on the route,
the kernel's defaults otherwise (SACK, early retransmit, tail loss probes, delayed ACKs,
quick-ACK mode). Prints the
FCTs (mean, p50, p99: from `connect()` until the receiver's one-byte answer to the
whole transfer arrives), the loss probes and timeouts the sender's namespace counted
(`TcpExtTCPLossProbes`, `TcpExtTCPTimeouts`), the RTO `TCP_INFO` reports, and the
kernel's HZ. Needs root, veth, nftables in the kernel (`nft` installed) and `tc`'s tbf;
there is no netem here, so the round trip is the veth pair's own (6 µs), not the
scenario's 60 µs.

The bucket holds 9,000 bytes (six full frames): with two (3,000 bytes) the shaper fell
short of its rate on a machine whose timers wake late, a bulk transfer
(`--size 50000000 --loss-every 1000000000 --transfers 5`) reaching 717 Mbit/s of
goodput where 1 Gbit/s carries 956 (1,448 of each 1,514 bytes); with 9,000 it reaches
955. A bucket that refilled during the gap between transfers lets at most its size
through at the host's speed, about 72 µs of the bottleneck's time.

    sudo python3 bench/linux-tcp-64k.py [--transfers 1000] [--burst 9000] [--json out.json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import socket
import statistics
import struct
import subprocess
import sys
import time
from pathlib import Path

SND, RCV = "mp64k-snd", "mp64k-rcv"
SND_IP, RCV_IP, PORT = "10.77.0.1", "10.77.0.2", 5001
SIZE = 65536


def sh(*args: str) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def netns(ns: str, *args: str) -> str:
    return sh("ip", "netns", "exec", ns, *args)


def setup(loss_every: int, rate: str, burst: int) -> None:
    teardown()
    sh("ip", "netns", "add", SND)
    sh("ip", "netns", "add", RCV)
    sh("ip", "link", "add", "mp64k-s", "type", "veth", "peer", "name", "mp64k-r")
    sh("ip", "link", "set", "mp64k-s", "netns", SND)
    sh("ip", "link", "set", "mp64k-r", "netns", RCV)
    for ns, dev, ip in ((SND, "mp64k-s", SND_IP), (RCV, "mp64k-r", RCV_IP)):
        netns(ns, "ip", "addr", "add", f"{ip}/24", "dev", dev)
        netns(ns, "ip", "link", "set", dev, "up")
        netns(ns, "ip", "link", "set", "lo", "up")
        # No offloads: the bucket shapes single segments and, with GRO off, the
        # receiver's drop rule sees each one.
        subprocess.run(["ip", "netns", "exec", ns, "ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off"],
                       capture_output=True)
    netns(SND, "ip", "route", "replace", "10.77.0.0/24", "dev", "mp64k-s", "rto_min", "5ms")
    netns(RCV, "ip", "route", "replace", "10.77.0.0/24", "dev", "mp64k-r", "rto_min", "5ms")
    netns(SND, "tc", "qdisc", "add", "dev", "mp64k-s", "root", "tbf", "rate", rate, "burst", str(burst),
          "limit", "1500000")
    # Dropped as they reach the receiver: TCP hands the sender's own hooks segments of
    # many MSS (software GSO cuts them up later), the receiver's see each one (no GRO).
    rules = (
        "table ip mp64k {\n chain in {\n  type filter hook prerouting priority -300; policy accept;\n"
        f"  ip saddr {SND_IP} tcp flags syn numgen random mod {loss_every} 0 counter drop\n"
        f"  ip saddr {SND_IP} ip length > 100 numgen random mod {loss_every} 0 counter drop\n"
        " }\n}\n"
    )
    subprocess.run(["ip", "netns", "exec", RCV, "nft", "-f", "-"], input=rules, text=True, check=True)


def teardown() -> None:
    for ns in (SND, RCV):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def counters(ns: str) -> dict[str, int]:
    """The namespace's TCP counters (/proc/net/netstat and /proc/net/snmp)."""
    out: dict[str, int] = {}
    for path in ("/proc/net/netstat", "/proc/net/snmp"):
        lines = netns(ns, "cat", path).splitlines()
        for head, vals in zip(lines[::2], lines[1::2]):
            prefix = head.split(":")[0]
            for k, v in zip(head.split()[1:], vals.split()[1:]):
                out[f"{prefix}{k}"] = int(v)
    return out


def kernel_hz() -> int | None:
    try:
        with gzip.open("/proc/config.gz", "rt") as f:
            for line in f:
                if line.startswith("CONFIG_HZ="):
                    return int(line.split("=")[1])
    except OSError:
        return None
    return None


def serve(size: int) -> None:
    """The receiver: read each connection to its end, answer one byte, close."""
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((RCV_IP, PORT))
    ls.listen(64)
    print("ready", flush=True)
    while True:
        c, _ = ls.accept()
        got = 0
        while got < size:
            b = c.recv(SIZE)
            if not b:
                break
            got += len(b)
        c.sendall(b"k")
        c.close()


def tcp_info(s: socket.socket) -> tuple[int, int]:
    """(tcpi_rto, tcpi_min_rtt) in µs: struct tcp_info has eight u8 fields, then u32s
    from tcpi_rto at byte 8; tcpi_min_rtt is at byte 148."""
    info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 152)
    return struct.unpack_from("I", info, 8)[0], struct.unpack_from("I", info, 148)[0]


def client(transfers: int, size: int) -> dict[str, object]:
    payload = b"x" * size
    fcts, rtos, min_rtts = [], [], []
    for _ in range(transfers):
        s = socket.socket()
        t0 = time.perf_counter()
        s.connect((RCV_IP, PORT))
        s.sendall(payload)
        s.shutdown(socket.SHUT_WR)
        ans = s.recv(1)
        t1 = time.perf_counter()
        rto, min_rtt = tcp_info(s)
        rtos.append(rto)
        min_rtts.append(min_rtt)
        s.close()
        assert ans == b"k"
        fcts.append(t1 - t0)
    return {"fct_s": fcts, "rto_us": rtos, "min_rtt_us": min_rtts}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--transfers", type=int, default=1000)
    ap.add_argument("--loss-every", type=int, default=50, help="drop 1 in N data segments and SYNs (50: 2%%)")
    ap.add_argument("--rate", default="1gbit")
    ap.add_argument("--burst", type=int, default=9000, help="the token bucket's size in bytes (see the module's doc)")
    ap.add_argument("--size", type=int, default=SIZE, help="bytes per transfer (64 KB; a large one checks the shaper's rate)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--role", choices=("main", "serve", "client"), default="main", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.role == "serve":
        return serve(args.size)
    if args.role == "client":
        print(json.dumps(client(args.transfers, args.size)))
        return
    if os.geteuid() != 0:
        sys.exit("needs root (network namespaces, tc, nftables)")
    setup(args.loss_every, args.rate, args.burst)
    try:
        # Both ends at a real-time priority, so a busy machine does not add to the FCTs.
        srv = subprocess.Popen(["ip", "netns", "exec", RCV, "chrt", "-f", "50", sys.executable, __file__,
                                "--role", "serve", "--size", str(args.size)], stdout=subprocess.PIPE, text=True)
        assert srv.stdout is not None and srv.stdout.readline().strip() == "ready"
        before = counters(SND)
        out = netns(SND, "chrt", "-f", "50", sys.executable, __file__, "--role", "client",
                    "--transfers", str(args.transfers), "--size", str(args.size))
        after = counters(SND)
        dropped = [int(n) for n in re.findall(r"packets (\d+)", netns(RCV, "nft", "list", "table", "ip", "mp64k"))]
        srv.kill()
    finally:
        teardown()
    res = json.loads(out)
    fcts = sorted(res["fct_s"])
    delta = {k: after[k] - before.get(k, 0) for k in after}
    summary = {
        "transfers": len(fcts),
        "size": args.size,
        "goodput_mbps_median": args.size * 8 / statistics.median(fcts) / 1e6,
        "kernel": os.uname().release,
        "hz": kernel_hz(),
        "fct_mean_ms": statistics.fmean(fcts) * 1e3,
        "fct_p50_ms": fcts[len(fcts) // 2] * 1e3,
        "fct_p99_ms": fcts[min(len(fcts) - 1, int(0.99 * len(fcts)))] * 1e3,
        "loss_probes": delta.get("TcpExtTCPLossProbes", 0),
        "timeouts": delta.get("TcpExtTCPTimeouts", 0),
        "syn_retrans": delta.get("TcpExtTCPSynRetrans", 0),
        "retrans_segs": delta.get("TcpRetransSegs", 0),
        "out_segs": delta.get("TcpOutSegs", 0),
        "rto_ms_median": statistics.median(res["rto_us"]) / 1e3,
        "min_rtt_us_median": statistics.median(res["min_rtt_us"]),
        "dropped_syn_data": dropped,
    }
    print(json.dumps(summary, indent=1))
    if args.json:
        args.json.write_text(json.dumps({**summary, "fct_s": res["fct_s"]}))


if __name__ == "__main__":
    main()
