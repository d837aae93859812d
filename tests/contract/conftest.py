"""Contract tests: each module skips only when SGLang is not importable."""

from __future__ import annotations

from pytest_specperf.contract import prepare_sglang_import

# A CUDA torchvision beside a CPU torch breaks `import sglang` unless prepared first.
prepare_sglang_import()
