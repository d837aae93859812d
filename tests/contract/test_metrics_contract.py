"""The /metrics names the suite polls, and how SGLang counts running requests at a prefill."""

from __future__ import annotations

import re

import pytest

from pytest_specperf.measure.server_load import QUEUED, RETRACTED, RUNNING
from tests.support import sglang_contract as contract

pytestmark = pytest.mark.contract
pytest.importorskip(
    "sglang.srt.server_args",
    reason="SGLang is not importable; install it with tools/install-sglang-contract.sh",
)


def test_every_metric_the_suite_polls_is_declared_by_sglang() -> None:
    assert contract.undeclared_metrics([RUNNING, QUEUED, RETRACTED]) == []


def test_a_misspelt_metric_is_reported_undeclared() -> None:
    assert contract.undeclared_metrics(["sglang:num_runing_reqs"]) == ["sglang:num_runing_reqs"]


def test_sglangs_prefill_count_of_running_requests_leaves_out_the_ones_joining() -> None:
    """What the report's "batch held by" reading rests on (results/open_loop_report.py): at a
    prefill SGLang reports the running batch's requests, and the new ones apart, so a full
    batch reads one below max_running_requests."""
    source = contract.prefill_gauge_source()
    assert re.search(r"num_running_reqs\s*=\s*QueueCount\.from_reqs\(\s*running_reqs", source)
    assert re.search(r"num_new_seqs\s*=\s*len\(adder\.can_run_list\)", source)
    assert re.search(r"from_adder\(\s*adder,\s*(?:self\.)?running_batch\.reqs", source)
