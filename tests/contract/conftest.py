"""Contract tests: skipped as a whole only when SGLang is not importable."""

from __future__ import annotations

import pytest

from pytest_specperf.contract import prepare_sglang_import

# A CUDA torchvision beside a CPU torch breaks `import sglang` unless prepared first.
prepare_sglang_import()
pytest.importorskip(
    "sglang.srt.server_args",
    reason="SGLang is not importable; install it with scripts/install-sglang-contract.sh",
)
