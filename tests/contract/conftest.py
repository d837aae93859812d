"""Contract tests: each module skips only when SGLang is not importable.

CI sets SPECPERF_REQUIRE_SGLANG=1: there a missing SGLang is an error, never a skip.
"""

from __future__ import annotations

import importlib
import os

from tests.support.sglang_contract import prepare_sglang_import

# A CUDA torchvision beside a CPU torch breaks `import sglang` unless prepared first.
prepare_sglang_import()

if os.environ.get("SPECPERF_REQUIRE_SGLANG") == "1":
    # Raises here, at collection, so the contract tests cannot be skipped silently.
    importlib.import_module("sglang.srt.server_args")
