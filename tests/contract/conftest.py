"""Contract tests: skipped as a whole only when SGLang is not importable."""

from __future__ import annotations

import pytest

pytest.importorskip(
    "sglang.srt.server_args",
    reason="SGLang is not importable; install it with scripts/install-sglang-contract.sh",
)
