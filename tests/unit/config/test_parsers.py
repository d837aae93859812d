"""config/parsers.py: the parsers of options not covered with the settings."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_specperf.config.parsers import parse_hardware_key, parse_server_env
from pytest_specperf.errors import UsageError
from pytest_specperf.server.hardware import gpu_key, sim_key


@pytest.mark.parametrize(
    "raw",
    ["../../etc", "..", ".", "a/b", "a\\b", "My Box", "1x-H200", "-h200", "h200-", "a..b", "é"],
)
def test_a_hardware_key_that_is_not_a_name_is_refused_in_one_line(raw: str) -> None:
    """A path, a name with spaces or capitals, a leading or trailing separator: refused, the
    option and the value named on one line, never turned into some other key."""
    with pytest.raises(UsageError) as caught:
        parse_hardware_key("--specperf-hardware", raw)
    message = str(caught.value)
    assert message.startswith(f"--specperf-hardware: {raw!r} is not a hardware key")
    assert "\n" not in message


@pytest.mark.parametrize(
    "raw", ["1x-h200", "4x-rtx-pro-6000-blackwell", "sim-x5", "sim-x2.5", "1x-a100+2x-h200"]
)
def test_a_hardware_key_is_taken_as_typed(raw: str) -> None:
    """The keys the suite files baselines under are taken exactly as typed."""
    assert parse_hardware_key("--specperf-hardware", raw) == raw


def test_no_hardware_key_is_the_automatic_one() -> None:
    """Not given (or empty, as an ini key left blank): the key comes from the server."""
    assert parse_hardware_key("--specperf-hardware", None) is None
    assert parse_hardware_key("--specperf-hardware", "") is None


@given(st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=4))
def test_every_gpu_key_the_suite_makes_can_be_typed_back(names: list[str]) -> None:
    """A key read from nvidia-smi's names, whatever they hold, is one the option takes."""
    key = gpu_key(names)
    assert parse_hardware_key("--specperf-hardware", key) == key


@given(st.floats(min_value=0.001, max_value=1e6, allow_nan=False))
def test_every_simulator_key_can_be_typed_back(speedup: float) -> None:
    """The simulator's key at any speedup (sim-x5, sim-x2.5, sim-x1e+06) is one it takes."""
    key = sim_key({"speedup": speedup})
    assert parse_hardware_key("--specperf-hardware", key) == key


def test_server_env_values_are_name_value_pairs_in_order() -> None:
    raw = ["PYTHONPATH=/src/a:$PYTHONPATH", "FLAG=", "PYTHONPATH=/src/b"]
    assert parse_server_env(raw, "--specperf-server-env") == (
        ("PYTHONPATH", "/src/a:$PYTHONPATH"),
        ("FLAG", ""),
        ("PYTHONPATH", "/src/b"),
    )


@pytest.mark.parametrize("raw", ["PYTHONPATH", "=x", "1X=2", "A B=c"])
def test_a_server_env_value_that_is_not_name_value_is_refused_in_one_line(raw: str) -> None:
    with pytest.raises(UsageError, match=r"--specperf-server-env: .* is not NAME=VALUE"):
        parse_server_env([raw], "--specperf-server-env")
