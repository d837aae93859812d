"""pytest_specperf.server.hardware: the hardware key baselines are filed under."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_specperf.errors import UsageError
from pytest_specperf.server.hardware import UNKNOWN_HARDWARE, gpu_key, hardware_key, sim_key, slug


def fake_nvidia_smi(directory: Path, output: str, code: int = 0) -> None:
    script = directory / "nvidia-smi"
    script.write_text(f"#!/bin/sh\nprintf '{output}'\nexit {code}\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


def test_gpu_key_counts_identical_cards() -> None:
    """Two H200s are '2x-h200'."""
    assert gpu_key(["NVIDIA H200"] * 2) == "2x-h200"


@pytest.mark.parametrize(
    "name",
    [
        "NVIDIA RTX PRO 6000 Blackwell Server Edition",
        "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
        "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
    ],
)
def test_gpu_key_strips_edition_suffix(name: str) -> None:
    """Editions of the RTX PRO 6000 Blackwell share one key."""
    assert gpu_key([name] * 4) == "4x-rtx-pro-6000-blackwell"


def test_gpu_key_lists_mixed_cards_each() -> None:
    """Mixed cards are listed each with their count, sorted."""
    assert gpu_key(["NVIDIA H200", "NVIDIA A100-SXM4-80GB", "NVIDIA H200"]) == (
        "1x-a100-sxm4-80gb+2x-h200"
    )


@given(st.text(max_size=120))
def test_slug_is_one_safe_path_segment(text: str) -> None:
    """A slug is non-empty, at most 80 chars of [a-z0-9-], never '.', '..' or with '/'."""
    value = slug(text)
    assert 0 < len(value) <= 80
    assert set(value) <= set("abcdefghijklmnopqrstuvwxyz0123456789-")
    assert not value.startswith("-")


def test_slug_of_symbols_only_is_unnamed() -> None:
    """Text without letters or digits gets a placeholder name."""
    assert slug("../..") == "unnamed"


def test_hardware_key_of_simulator_uses_speedup() -> None:
    """The simulator's key is its speedup: 'sim-x5'."""
    assert hardware_key({"sim": {"speedup": 5.0}}) == "sim-x5"


def test_sim_key_defaults_to_speedup_one() -> None:
    """A sim block without a speedup is 'sim-x1'."""
    assert sim_key({}) == "sim-x1"


def test_hardware_key_override_wins_as_given() -> None:
    """An explicit override beats the simulator's key and is the key as typed."""
    assert hardware_key({"sim": {"speedup": 5}}, override="my-box") == "my-box"


def test_hardware_key_refuses_an_override_that_is_not_a_name() -> None:
    """An override that is not a key (a path here) is an error, never some other key."""
    with pytest.raises(UsageError, match=r"'\.\./\.\./etc' is not a hardware key"):
        hardware_key({"sim": {"speedup": 5}}, override="../../etc")


def test_hardware_key_reads_nvidia_smi_limited_to_tp_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real servers are keyed by nvidia-smi's names, counting only tp_size GPUs."""
    fake_nvidia_smi(tmp_path, "NVIDIA H200\\nNVIDIA H200\\nNVIDIA H200\\n")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert hardware_key({}, tp_size=2) == "2x-h200"


def test_hardware_key_without_nvidia_smi_is_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without nvidia-smi the key is 'unknown-hardware'."""
    monkeypatch.setenv("PATH", str(tmp_path))
    assert hardware_key({}) == UNKNOWN_HARDWARE


def test_hardware_key_with_failing_nvidia_smi_is_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failing nvidia-smi gives 'unknown-hardware', not an error."""
    fake_nvidia_smi(tmp_path, "NVIDIA-SMI has failed\\n", code=9)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert hardware_key({}) == UNKNOWN_HARDWARE
