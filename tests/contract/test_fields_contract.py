"""Every response field the suite reads exists in SGLang's source."""

from __future__ import annotations

import pytest

from tests.support import sglang_contract as contract

pytestmark = pytest.mark.contract
pytest.importorskip(
    "sglang.srt.server_args",
    reason="SGLang is not importable; install it with tools/install-sglang-contract.sh",
)


def test_every_field_the_suite_reads_is_in_sglang_source() -> None:
    assert contract.missing_fields() == []


def test_misspelt_field_name_is_reported_missing() -> None:
    names = ["spec_verify_ct", "spec_verfy_ct", "avg_spec_accept_lenght", "intrenal_states"]
    assert contract.missing_fields(names) == names[1:]


def test_field_list_is_not_empty() -> None:
    assert "spec_verify_ct" in contract.suite_field_names()
