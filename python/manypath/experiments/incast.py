"""TCP incast: many senders answer one receiver at once through a shallow switch buffer.

With drop-tail buffers, growing fan-in overflows the receiver's port, whole windows are
lost, and the senders that lose their tail wait out the 200 ms minimum RTO, so the job
completion time jumps from about a millisecond to hundreds of milliseconds.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pandas as pd

from .. import analysis, plots
from ..results import Results
from ..runner import run
from .registry import experiment
from . import citations as cite

if TYPE_CHECKING:
    from matplotlib.figure import Figure

RESPONSE_BYTES = 131072
FULL_FAN_IN = (1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64)
REDUCED_FAN_IN = (1, 4, 16, 40)
RECEIVER = 0
COLUMNS = [
    "fan_in",
    "completed",
    "jct_ms",
    "fct_mean_ms",
    "fct_p99_ms",
    "timeouts",
    "flows_with_timeout",
    "bottleneck_drops",
    "goodput_gbps",
]


def scenario(fan_in: int, seed: int = 1) -> dict[str, Any]:
    """The incast scenario for ``fan_in`` senders, as a dict ready for ``manypath.run``."""
    return {
        "name": f"incast-tcp-n{fan_in}",
        "seed": seed,
        # Far longer than the job takes even after several RTOs, so every flow finishes.
        "duration_ms": 5000,
        "topology": {"star": {"senders": fan_in}},
        "network": {
            # 10 µs per link, so host–switch–host is ~40 µs round trip.
            "link": {"rate_gbps": 10, "delay_us": 10},
            # Drop-tail, no ECN threshold.
            "queue": {"limit_packets": 100},
        },
        "tcp": {"rto_min_us": 200_000, "init_cwnd_packets": 10},
        "traffic": [
            {
                "pattern": "incast",
                "transport": "tcp",
                "class": "incast",
                "receiver": RECEIVER,
                "senders": fan_in,
                "size": {"fixed": RESPONSE_BYTES},
            }
        ],
    }


def bottleneck_port(queues: pd.DataFrame, host: int = RECEIVER) -> pd.DataFrame:
    """The switch output port(s) that feed ``host``."""
    peer = queues["peer"].astype(str)
    names = {str(host), f"host{host}"}
    return queues[(queues["node_kind"] == "switch") & peer.isin(names)]


def measure(res: Results, fan_in: int) -> dict[str, Any]:
    """One table row from one run."""
    flows = res.flows[res.flows["class"] == "incast"]
    done = flows[flows["completed"].astype(bool)]
    all_done = len(flows) > 0 and len(done) == len(flows)
    # The whole response is needed before the application can go on, so the job ends
    # with its slowest flow.
    jct_s = float(flows["finish_s"].max() - flows["start_s"].min()) if all_done else math.nan
    return {
        "fan_in": fan_in,
        "completed": int(len(done)),
        "jct_ms": jct_s * 1e3,
        **analysis.stat_columns(analysis.completed_fct_ms(flows), ("mean", "p99"), "fct"),
        "timeouts": int(flows["timeouts"].sum()),
        "flows_with_timeout": int((flows["timeouts"] > 0).sum()),
        "bottleneck_drops": int(bottleneck_port(res.queues)["drops"].sum()),
        "goodput_gbps": fan_in * RESPONSE_BYTES * 8 / jct_s / 1e9 if jct_s > 0 else math.nan,
    }


def plot_incast(table: pd.DataFrame) -> Figure:
    """JCT against fan-in on a log axis: the jump from milliseconds to the 200 ms RTO is
    the collapse the documents show."""
    fig = plots.line(
        table,
        "fan_in",
        "jct_ms",
        xlabel="number of senders (fan-in)",
        ylabel="job completion time (ms)",
        title="TCP incast: 128 KB per sender, 100-packet drop-tail buffer",
        logy=True,
    )
    plots.reference_line(fig.axes[0], 200.0, "min RTO 200 ms", float(table["fan_in"].min()))
    return fig


@experiment(
    name="incast-tcp",
    document=f"TCP incast baseline (the setting of {cite.AMP} §3.1 and {cite.FUSO} §5.2.3)",
    figure="job completion time and RTOs vs fan-in",
    compares="TCP NewReno on a star, 128 KB per sender, drop-tail 100-packet buffers; "
    "job completion time, RTOs and goodput as fan-in grows",
    reduced_time="~1 s",
    full_time="~2 s",
    plot=plot_incast,
)
def run_incast(full: bool, seed: int) -> pd.DataFrame:
    rows = [measure(run(scenario(n, seed)), n) for n in (FULL_FAN_IN if full else REDUCED_FAN_IN)]
    return pd.DataFrame(rows, columns=COLUMNS)
