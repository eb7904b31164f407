"""The lossless RoCE fabric the RDMA experiments share: switch buffers, RED-style ECN
thresholds and PFC as the HPCC authors' public simulator sets them for a given NIC rate
(alibaba-edu/High-Precision-Congestion-Control, `simulation/run.py`, `scratch/third.cc`,
`switch-mmu.cc`), the four congestion controllers the HPCC paper compares, the
workloads, and what a run's tables say about PFC.

Values of the simulator, for NIC rate ``bw`` Gb/s (``run.py``):

* buffer per switch ``16·bw/50`` MiB (``BUFFER_SIZE`` in MB, times 1024·1024 in
  ``third.cc``): 32 MiB at 100 Gb/s;
* RED-style marking per port rate r (Gb/s): Kmin = 100·r/25 KB, Kmax = 400·r/25 KB,
  Pmax = 0.2 for DCQCN, HPCC and TIMELY; DCTCP marks at K = 30·r/10 KB with Pmax = 1
  (a step); KB = 1000 B (``ConfigEcn`` multiplies by 1000);
* PFC with dynamic thresholds (``USE_DYNAMIC_PFC_THRESHOLD 1``): XOFF when an ingress
  queue's shared use reaches (free buffer) >> 3, i.e. α = 1/8 for ports at the NIC rate;
  4 KiB reserved per ingress queue and XON 3 KiB below the threshold (``switch-mmu.cc``);
  headroom 3 × rate × delay per port (``third.cc``);
* 1000-byte payloads, an ACK for every packet (``L2_ACK_INTERVAL 1``).

Where the scenario format cannot say what the simulator does (one PFC α for every port,
where the simulator doubles α per doubling of a port's rate above the NIC's), the choice is
written in docs/experiments.md.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

#: The shipped workloads directory (``workloads/`` at the top of the source tree).
WORKLOADS = Path(__file__).resolve().parents[3] / "workloads"
#: Built into the simulator by name; the others are given by their file's path.
BUILTIN_CDFS = ("websearch", "datamining")

PAYLOAD_BYTES = 1000
KB = 1000
MIB = 1024 * 1024
#: PFC: ingress reserve and XON offset per (port, class), and the dynamic-threshold α
#: (``switch-mmu.cc``: 4 KiB, 3 KiB; ``third.cc``: shift 3, i.e. 1/8, at the NIC rate).
PFC_RESERVE_BYTES = 4 * 1024
PFC_RESUME_OFFSET_BYTES = 3 * 1024
PFC_ALPHA = 0.125
#: The shared buffer's dynamic threshold for egress queues. The simulator admits every
#: packet at egress (``CheckEgressAdmission`` is always true) and governs the buffer by
#: PFC's ingress thresholds alone; α = 8 lets one queue take 8/9 of the buffer, so here
#: too PFC, not an egress drop, is what stops a queue from growing.
BUFFER_ALPHA = 8.0

#: The controllers of the HPCC paper's comparison, in its figures' order.
CCS = ("hpcc", "dcqcn", "timely", "dctcp")
ROCE_CCS = ("hpcc", "dcqcn", "timely")
#: Which controllers put ACKs (and CNPs) in a high-priority queue ahead of data
#: (``ACK_HIGH_PRIO`` in ``run.py``: 1 for DCQCN and TIMELY, 0 for HPCC and DCTCP).
ACK_HIGH_PRIORITY = {"hpcc": False, "dcqcn": True, "timely": True, "dctcp": False}


def buffer_bytes(nic_gbps: float) -> int:
    """The switch buffer of the HPCC simulator for NIC rate ``nic_gbps``: 16·bw/50 MiB."""
    return int(16 * nic_gbps / 50 * MIB)


@dataclass(frozen=True)
class Marking:
    """ECN marking of one port rate: RED-style between ``kmin`` and ``kmax`` (bytes) with
    ``pmax``, or a step at ``kmin`` when ``step`` (DCTCP)."""

    kmin_bytes: int
    kmax_bytes: int
    pmax: float
    step: bool = False


def marking(cc: str, port_gbps: float) -> Marking:
    """The HPCC simulator's marking thresholds for a port of ``port_gbps`` under ``cc``."""
    if cc == "dctcp":
        k = round(30 * port_gbps / 10 * KB)
        return Marking(k, k, 1.0, step=True)
    if cc in ROCE_CCS:
        return Marking(round(100 * port_gbps / 25 * KB), round(400 * port_gbps / 25 * KB), 0.2)
    raise ValueError(f"unknown congestion control {cc!r}; expected one of {', '.join(CCS)}")


def queue(cc: str, port_gbps: float, nic_gbps: float) -> dict[str, Any]:
    """A switch output queue: the static limit is the whole buffer, so the shared buffer's
    dynamic threshold and PFC decide; marking as :func:`marking`, at dequeue; two strict-priority
    classes when control packets go ahead of data."""
    m = marking(cc, port_gbps)
    # The simulator marks as a packet leaves, on the egress queue behind it
    # (``SwitchNode::SwitchNotifyDequeue``), for every controller.
    q: dict[str, Any] = {"limit_bytes": buffer_bytes(nic_gbps), "ecn_mark": "dequeue"}
    if m.step:
        q["ecn_k_bytes"] = m.kmin_bytes
    else:
        q["ecn_red"] = {"kmin_bytes": m.kmin_bytes, "kmax_bytes": m.kmax_bytes, "pmax": m.pmax}
    if ACK_HIGH_PRIORITY[cc]:
        q["priority"] = True
    return q


def data_priority(cc: str) -> int:
    """The traffic entries' priority class: 1 behind the control class 0 when ACKs go
    ahead of data, else 0 (one FIFO for both, as the simulator's ``ACK_HIGH_PRIO 0``)."""
    return 1 if ACK_HIGH_PRIORITY[cc] else 0


def network(cc: str, nic_gbps: float, tier_gbps: dict[str, float], delay_us: float = 1.0) -> dict[str, Any]:
    """The ``[network]`` table: links at ``nic_gbps`` (the host tier) and ``tier_gbps``
    for the named switch tiers, one shared buffer per switch, PFC everywhere with the
    simulator's dynamic threshold, and each tier's queue marking for its rate."""
    return {
        "link": {"rate_gbps": nic_gbps, "delay_us": delay_us},
        "queue": queue(cc, nic_gbps, nic_gbps),
        "tiers": {
            name: {"rate_gbps": rate, "queue": queue(cc, rate, nic_gbps)} for name, rate in tier_gbps.items()
        },
        "buffer": {"bytes": buffer_bytes(nic_gbps), "alpha": BUFFER_ALPHA},
        "pfc": {
            "alpha": PFC_ALPHA,
            "reserve_bytes": PFC_RESERVE_BYTES,
            "resume_offset_bytes": PFC_RESUME_OFFSET_BYTES,
        },
    }


def roce_transport(cc: str) -> dict[str, Any]:
    """A ``[transports.NAME]`` table for a RoCE controller: the HPCC simulator's packet
    size and ACK interval, go-back-N on a NAK with no timer as its NICs, and the window
    only for HPCC (``HAS_WIN`` 1 for HPCC, 0 for DCQCN and TIMELY). The controllers' own
    constants are the transport's defaults except HPCC's η (``U_TARGET`` 0.95) and
    maxStage (``MI_THRESH`` 0), which ``run.py`` sets on its command line."""
    if cc not in ROCE_CCS:
        raise ValueError(f"{cc!r} is not a RoCE controller; expected one of {', '.join(ROCE_CCS)}")
    t: dict[str, Any] = {
        "cc": cc,
        "retransmit": "go-back-n",
        # The simulator's NICs have no retransmission timer: a NAK alone starts go-back-N
        # (its PFC fabric loses nothing). A timer would fire on data held by pauses.
        "retransmit_timeout": False,
        "ack_every": 1,
        "window": cc == "hpcc",
        "payload_bytes": PAYLOAD_BYTES,
    }
    if cc == "hpcc":
        t.update(hpcc_eta=0.95, hpcc_max_stage=0)
    return t


def transports(cc: str) -> dict[str, Any]:
    """The ``[transports]`` table a run of ``cc`` needs (DCTCP is built in)."""
    return {} if cc == "dctcp" else {cc: roce_transport(cc)}


def tcp(bdp_bytes: float) -> dict[str, Any]:
    """``[tcp]`` for the DCTCP baseline: 1000-byte segments like the RoCE payload, and an
    initial window of one bandwidth-delay product, as the simulator's DCTCP starts at line
    rate with a BDP window (``HAS_WIN 1``, ``VAR_WIN 1``)."""
    return {"mss": PAYLOAD_BYTES, "init_cwnd_packets": max(10, math.ceil(bdp_bytes / PAYLOAD_BYTES))}


# --- Workloads ---------------------------------------------------------------------------------


def cdf_path(name: str) -> Path:
    return WORKLOADS / f"{name}.cdf"


def size_spec(name: str) -> dict[str, str]:
    """``size`` of a traffic entry drawing from the shipped workload ``name``."""
    if name in BUILTIN_CDFS:
        return {"cdf": name}
    path = cdf_path(name)
    if not path.exists():
        raise ValueError(f"no shipped workload {name!r} (looked for {path})")
    return {"cdf": str(path)}


def cdf_points(name: str) -> list[tuple[float, float]]:
    """The (size_bytes, cdf) points of a shipped workload."""
    points = []
    for line in cdf_path(name).read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            x, f = line.split()
            points.append((float(x), float(f)))
    return points


def cdf_mean(points: Sequence[tuple[float, float]]) -> float:
    """The mean of the piecewise-linear CDF (a point mass at the first size if its CDF is
    above 0): the mean the simulator's sampler has and sets Poisson rates from."""
    x0, f0 = points[0]
    total = x0 * f0
    for (xa, fa), (xb, fb) in zip(points, points[1:]):
        total += (fb - fa) * (xa + xb) / 2
    return total / points[-1][1]


def cdf_quantile(points: Sequence[tuple[float, float]], q: float) -> float:
    """The size below which a fraction ``q`` of flows fall (the inverse of the
    piecewise-linear CDF; the lower end of a point mass)."""
    if not 0 <= q <= 1:
        raise ValueError(f"quantile must be in [0, 1], got {q}")
    for (xa, fa), (xb, fb) in zip(points, points[1:]):
        if q <= fb:
            if q <= fa or fb == fa:
                return xa
            return xa + (xb - xa) * (q - fa) / (fb - fa)
    return points[-1][0]


def arrival_rate_per_host(load: float, nic_gbps: float, mean_bytes: float) -> float:
    """Flows per second each host starts at ``load`` of its link: load·rate/(8·mean)."""
    return load * nic_gbps * 1e9 / (8 * mean_bytes)


# --- Incast ------------------------------------------------------------------------------------


def incast_entries(
    cc: str,
    *,
    hosts: int,
    fan_in: int,
    bytes_per_sender: int,
    load: float,
    nic_gbps: float,
    until_us: float,
    seed: int,
) -> list[dict[str, Any]]:
    """Incasts arriving as a Poisson process that carries ``load`` of the network's host
    capacity (hosts × nic rate), each from ``fan_in`` random senders to one random
    receiver, ``bytes_per_sender`` each: the HPCC paper's incast mix as its first author
    describes it. One ``incast`` traffic entry per event (its first host is the receiver);
    the draws come from their own generator seeded by ``seed``, so the background traffic's
    draws do not move."""
    if not 0 < fan_in < hosts:
        raise ValueError(f"fan_in must be between 1 and {hosts - 1} (the other hosts), got {fan_in}")
    rate_per_s = load * hosts * nic_gbps * 1e9 / (8 * fan_in * bytes_per_sender)
    rng = random.Random(f"incast-{seed}")
    entries: list[dict[str, Any]] = []
    t_us = rng.expovariate(rate_per_s) * 1e6
    while t_us < until_us:
        picked = rng.sample(range(hosts), fan_in + 1)
        entries.append({
            "pattern": "incast",
            "transport": cc,
            "class": "incast",
            "priority": data_priority(cc),
            "hosts": picked,
            "receiver": picked[0],
            "senders": fan_in,
            "size": {"fixed": bytes_per_sender},
            "start_us": round(t_us, 3),
        })
        t_us += rng.expovariate(rate_per_s) * 1e6
    return entries


# --- What the tables say about PFC ---------------------------------------------------------

#: The queue table's time-paused columns (one per priority class) start with this.
PAUSE_TIME_PREFIX = "pfc_paused_s"


def pause_time_s(queues: pd.DataFrame) -> float:
    """Total time ports spent paused by PFC (s), summed over every port and class; NaN when
    the table has no pause columns (a run without PFC)."""
    cols = [c for c in queues.columns if str(c).startswith(PAUSE_TIME_PREFIX)]
    if not cols:
        return math.nan
    return float(queues[cols].to_numpy(dtype=float).sum())


#: The registered experiments that need the RoCE transports and the lossless fabric.
EXPERIMENTS = ("hpcc-fct", "dcqcn-fairness", "dcqcn-victim")


def roce_supported() -> bool:
    """Whether the installed simulator knows the RoCE transport (``cc = "dcqcn"``): the
    experiments here need it. Only an objection to that ``cc`` value counts, so that once
    it is known, any other field these experiments set that the simulator refuses shows
    up as an error rather than as skipped tests."""
    from ..runner import validate

    probe = {
        "name": "roce-probe",
        "duration_ms": 1,
        "topology": {"star": {"senders": 1}},
        "transports": {"dcqcn": {"cc": "dcqcn"}},
        "traffic": [{"pattern": "pair", "src": 1, "dst": 0, "transport": "dcqcn", "size": {"fixed": 1000}}],
    }
    try:
        validate(probe)
    except ValueError as e:
        return not any(line.startswith("transports.dcqcn.cc:") for line in str(e).splitlines())
    return True
