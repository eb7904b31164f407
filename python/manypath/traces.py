"""Event traces (``output.trace``): a summary per port and a queue's occupancy over time."""

from __future__ import annotations

import pandas as pd

#: The kinds of events a trace records, in the order the summary shows them.
EVENT_KINDS = ["enqueue", "dequeue", "drop", "mark", "trim", "pause", "resume"]


def summarise(trace: pd.DataFrame, queues: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per traced port: its events counted by kind, its peak occupancy in
    packets and bytes and when the packet peak was first reached, the first and last
    event times; labelled with the port's node and peer when the queue table is given."""
    rows = []
    for port, events in trace.groupby("port", sort=True, observed=True):
        counts = events["event"].astype(str).value_counts()
        peak = events["queue_packets"].idxmax()
        row: dict[str, object] = {"port": int(port)}
        row.update({k: int(counts.get(k, 0)) for k in EVENT_KINDS})
        row["peak_packets"] = int(events["queue_packets"].max())
        row["peak_bytes"] = int(events["queue_bytes"].max())
        row["peak_at_s"] = float(events.at[peak, "time_s"])
        row["first_s"] = float(events["time_s"].min())
        row["last_s"] = float(events["time_s"].max())
        rows.append(row)
    columns = ["port", *EVENT_KINDS, "peak_packets", "peak_bytes", "peak_at_s", "first_s", "last_s"]
    out = pd.DataFrame(rows, columns=columns)
    if queues is not None and len(out):
        names = queues.set_index("port")[["node", "peer"]]
        out = out.join(names, on="port")
        out = out[["port", "node", "peer", *columns[1:]]]
    return out


def occupancy(trace: pd.DataFrame, port: int) -> pd.DataFrame:
    """The occupancy of ``port``'s queue after each of its events, in time order
    (``time_s``, ``queue_packets``, ``queue_bytes``): a step function."""
    events = trace[trace["port"] == port]
    return events[["time_s", "queue_packets", "queue_bytes"]].reset_index(drop=True)
