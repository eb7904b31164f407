"""The congestion signals a run's summary reports (a module of its own, without pandas:
the terminal report imports it at every start of the command line)."""

#: The congestion signals a summary reports, in order: its key, its label in the printed
#: summary and what it counts.
SIGNALS = (
    ("pfc_pauses", "PFC pauses", "PFC PAUSE frames switches sent"),
    ("pfc_resumes", "PFC resumes", "PFC RESUME frames switches sent"),
    ("cnps", "CNPs", "CNPs RoCE senders received"),
    ("trims", "trims", "packets trimmed to their header at switch ports"),
    ("nacks", "NACKs", "NACKs NDP senders and NAKs RoCE senders received"),
)
