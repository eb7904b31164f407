"""What stops a sweep before any run, that the command line reports in one line."""

from __future__ import annotations


class BackendUnavailable(RuntimeError):
    """The backend a sweep was asked to run on is not there (Ray not installed, no
    cluster to join); the message says what to do instead."""


#: ``--ray auto`` (``ray="auto"``) with no cluster to join.
NO_RAY_CLUSTER = (
    "--ray auto: no running Ray cluster to join (none was started on this machine with "
    "`ray start`, and RAY_ADDRESS is not set); start one with `ray start --head`, give a "
    "cluster's address with --ray ADDRESS, or use --ray local to start Ray for this sweep"
)
