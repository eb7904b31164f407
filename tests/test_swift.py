"""Swift's endpoint window through the Python API: a slow receiving host (its host delay)
caps the flow at the host's rate with a short Rx queue, and the scenarios the host-delay
fields refuse, each naming the field."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import manypath
from refusals import assert_refused

STAR = """\
duration_ms = 10
stop_when_done = false

[topology.star]
senders = 1

[network.queue]
limit_packets = 100000

[transports.sw]
cc = "swift"

[[traffic]]
pattern = "pair"
transport = "sw"
src = 1
dst = 0
size = "long_lived"
"""


def with_fields(fields: str, cc: str = "swift") -> str:
    return STAR.replace('cc = "swift"', f'cc = "{cc}"\n{fields}')


def test_a_host_delay_caps_the_flow_at_the_hosts_rate() -> None:
    plain = manypath.run(STAR).flows["goodput_bps"].iloc[0]
    held = manypath.run(with_fields("swift_host_delay_us = 2.0")).flows["goodput_bps"].iloc[0]
    # 1460 payload bytes per 2 µs: 5.84 Gb/s at most, against about 9.7 Gb/s on the link.
    assert plain > 9e9
    assert 0.9 * 5.84e9 < held <= 5.84e9


# Bad input: each case breaks one thing and must name its field.
BAD: list[tuple[str, str, tuple[str, ...]]] = [
    ("host-delay-negative", with_fields("swift_host_delay_us = -1"), ("transports.sw.swift_host_delay_us", "-1")),
    ("host-delay-wrong-type", with_fields('swift_host_delay_us = "two"'), ("transports.sw.swift_host_delay_us",)),
    ("endpoint-target-below-host-delay",
     with_fields("swift_host_delay_us = 30\nswift_endpoint_target_us = 20"),
     ("transports.sw.swift_endpoint_target_us", "swift_host_delay_us", "30")),
    ("endpoint-target-without-host-delay", with_fields("swift_endpoint_target_us = 50"),
     ("transports.sw.swift_endpoint_target_us", "host delay")),
    ("endpoint-target-zero", with_fields("swift_host_delay_us = 1\nswift_endpoint_target_us = 0"),
     ("transports.sw.swift_endpoint_target_us",)),
    ("endpoint-beta-zero", with_fields("swift_host_delay_us = 1\nswift_endpoint_beta = 0"),
     ("transports.sw.swift_endpoint_beta", "positive")),
    ("endpoint-ai-negative", with_fields("swift_host_delay_us = 1\nswift_endpoint_ai = -2"),
     ("transports.sw.swift_endpoint_ai", "-2")),
    ("host-delay-on-dctcp", with_fields("swift_host_delay_us = 1", cc="dctcp"),
     ("transports.sw.swift_host_delay_us", "swift")),
]


@pytest.mark.parametrize("entry", [manypath.validate, manypath.run], ids=["validate", "run"])
@pytest.mark.parametrize(("case", "toml", "expect"), BAD, ids=[b[0] for b in BAD])
def test_bad_swift_input_names_the_field(case: str, toml: str, expect: tuple[str, ...],
                                        entry: Callable[..., Any], tmp_path: Path) -> None:
    assert_refused(entry, toml, expect, tmp_path, case)
