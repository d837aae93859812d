"""The simulator's table of SGLang's launch flags is the pinned SGLang's own parser."""

from __future__ import annotations

import pytest

from pytest_specperf.sim.sglang_flags import SGLANG_FLAGS, SGLANG_VERSION
from tests.support import sglang_contract as contract

pytestmark = pytest.mark.contract
pytest.importorskip(
    "sglang.srt.server_args",
    reason="SGLang is not importable; install it with tools/install-sglang-contract.sh",
)

REGENERATE = "regenerate it: python tools/gen_sim_sglang_flags.py"


def test_table_is_of_the_installed_sglang() -> None:
    assert contract.sglang_version() == SGLANG_VERSION, REGENERATE


def test_table_has_every_flag_of_sglang_with_its_arity() -> None:
    sglang = contract.launch_flag_arities()
    missing = sorted(set(sglang) - set(SGLANG_FLAGS))
    extra = sorted(set(SGLANG_FLAGS) - set(sglang))
    differ = sorted(f for f in set(sglang) & set(SGLANG_FLAGS) if sglang[f] != SGLANG_FLAGS[f])
    assert (missing, extra, differ) == ([], [], []), REGENERATE
