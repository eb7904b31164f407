"""The AMP document's microbenchmarks (Kheirkhah and Lee, §3 and §5.2): TCP incast with
multipath flows, and the minimum window syndrome.

Settings follow the document and the authors' ns-3 scripts (docs: reference defaults):
a star of 10 Gbps links (5 µs each), 100-packet queues marking at K, 1400-byte segments,
initial window 1, minimum RTO 200 ms, 4 subflows per multipath flow.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from .. import analysis
from .registry import experiment

SCHEMES = ("dctcp", "dcm", "xmp", "amp")
AMP_TCP = {"rto_min_us": 200_000, "init_cwnd_packets": 1, "mss": 1400}


def star(senders: int, k: int, traffic: list[dict[str, Any]], **top: Any) -> dict[str, Any]:
    return {
        "topology": {"star": {"senders": senders}},
        "network": {
            "link": {"rate_gbps": 10, "delay_us": 5},
            "queue": {"limit_packets": 100, "ecn_k_packets": k},
        },
        "tcp": AMP_TCP,
        "traffic": traffic,
        **top,
    }


def incast_scenario(scheme: str, flows: int, size: int, repeat: int, seed: int) -> dict[str, Any]:
    """`flows` flows of `size` bytes join host 0's link 50 µs apart, every second."""
    traffic = [
        {
            "pattern": "incast",
            "transport": scheme,
            "receiver": 0,
            "senders": flows,
            "stagger_us": 50,
            "size": {"fixed": size},
            "repeat": repeat,
            "interval_us": 1_000_000,
        }
    ]
    return star(flows, 10, traffic, name=f"amp-incast-{scheme}-{flows}-{size}", seed=seed,
                duration_ms=1000 * repeat + 5000)


def plot_incast(table: pd.DataFrame) -> Figure:
    from ..plots import line

    first = table[table["size_kb"] == table["size_kb"].min()]
    return line(first, "flows", "fct_mean_ms", by="scheme", xlabel="number of flows (k)",
                ylabel="mean flow completion time (ms)", logy=True,
                title=f"Incast, {int(first['size_kb'].iloc[0])} KB, 4 subflows (AMP Fig. 2, 8)")


@experiment(
    name="amp-incast",
    document="AMP (000) §3.1 and §5.2",
    figure="Fig. 2 and Fig. 8: mean and std of FCT vs number of flows",
    compares="DCTCP, DCM, XMP, AMP (4 subflows): k flows of 128/256/512 KB join one "
    "10 Gbps bottleneck 50 µs apart, every second; FCT mean/std, timeouts",
    reduced_time="~2 s",
    full_time="~1 min",
    plot=plot_incast,
)
def run_incast(full: bool, seed: int) -> pd.DataFrame:
    from .. import run

    sizes = (128, 256, 512) if full else (128,)
    repeat = 20 if full else 3
    rows = []
    for size_kb in sizes:
        for flows in (10, 20, 30, 40):
            for scheme in SCHEMES:
                res = run(incast_scenario(scheme, flows, size_kb * 1024, repeat, seed))
                f = res.flows
                fct_ms = f["fct_s"].to_numpy(dtype=float) * 1e3
                rows.append({
                    "scheme": scheme,
                    "size_kb": size_kb,
                    "flows": flows,
                    "completed": int(f["completed"].sum()),
                    "fct_mean_ms": float(fct_ms.mean()),
                    "fct_std_ms": float(fct_ms.std()),
                    "fct_p99_ms": analysis.percentile(fct_ms, 99),
                    "timeouts": int(f["timeouts"].sum()),
                    "flows_with_timeout": int((f["timeouts"] > 0).sum()),
                    "ssr_suppressions": int(f["ssr_suppressions"].sum()),
                })
    return pd.DataFrame(rows)


def syndrome_scenario(scheme: str, subflows: int, dctcp_flows: int, k: int, duration_ms: float,
                      seed: int) -> dict[str, Any]:
    """One multipath flow with `subflows` subflows and `dctcp_flows` DCTCP flows to host 0."""
    traffic: list[dict[str, Any]] = [
        {"pattern": "pair", "src": 1, "dst": 0, "transport": "mp", "class": "multipath",
         "size": "long_lived"}
    ]
    traffic += [
        {"pattern": "pair", "src": 2 + i, "dst": 0, "transport": "dctcp", "class": "dctcp",
         "size": "long_lived"}
        for i in range(dctcp_flows)
    ]
    return star(dctcp_flows + 1, k, traffic, name=f"amp-syndrome-{scheme}-{subflows}", seed=seed,
                duration_ms=duration_ms, warmup_ms=duration_ms / 5,
                transports={"mp": {"cc": scheme, "subflows": subflows}})


def plot_syndrome(table: pd.DataFrame) -> Figure:
    from ..plots import line

    return line(table, "subflows", "ratio", by="scheme", xlabel="subflows of the multipath flow",
                ylabel="multipath / DCTCP goodput",
                title="Minimum window syndrome: 8 DCTCP flows, K = 10 (AMP Fig. 4a, 9)")


@experiment(
    name="amp-syndrome",
    document="AMP (000) §3.2 and §5.2",
    figure="Fig. 4(a) and Fig. 9: goodput of a multipath flow vs 8 DCTCP flows",
    compares="DCM, XMP, AMP with 2-8 subflows against 8 DCTCP flows at a 10 Gbps "
    "bottleneck marking at K = 10; goodput per class, Jain's index",
    reduced_time="~1 s",
    full_time="~20 s",
    plot=plot_syndrome,
)
def run_syndrome(full: bool, seed: int) -> pd.DataFrame:
    from .. import run

    duration = 1000.0 if full else 100.0
    rows = []
    for scheme in ("dcm", "xmp", "amp"):
        for subflows in (range(2, 9) if full else (2, 4, 8)):
            f = run(syndrome_scenario(scheme, subflows, 8, 10, duration, seed)).flows
            mp = float(f.loc[f["class"] == "multipath", "goodput_bps"].iloc[0])
            dctcp = f.loc[f["class"] == "dctcp", "goodput_bps"]
            rows.append({
                "scheme": scheme,
                "subflows": subflows,
                "multipath_gbps": mp / 1e9,
                "dctcp_mean_gbps": float(dctcp.mean()) / 1e9,
                "ratio": mp / float(dctcp.mean()) if dctcp.mean() > 0 else math.nan,
                "jain": analysis.jain_index(f["goodput_bps"].to_numpy()),
                "ssr_suppressions": int(f["ssr_suppressions"].sum()),
            })
    return pd.DataFrame(rows)
