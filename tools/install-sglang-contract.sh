#!/usr/bin/env bash
# Install SGLang 0.5.23 (CPU only, import-time packages only) into the CURRENT python
# environment, for the contract tests in tests/contract. Fails loudly if SGLang's argument
# parser and request types cannot be imported afterwards.
#
#   PYTHON=/path/to/python tools/install-sglang-contract.sh
#   INSTALLER=uv tools/install-sglang-contract.sh     # with `uv pip` (uv's own index settings)
#
# Every package is pinned and installed with --no-deps, so nothing can pull a CUDA torch or
# SGLang's GPU kernels. Takes about 75 s with pip, 12 s with uv on this project's machines.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
requirements="$repo/requirements/sglang-contract.txt"
python="${PYTHON:-python}"
installer="${INSTALLER:-pip}"

start=$(date +%s)
case "$installer" in
    pip) "$python" -m pip install --no-deps --only-binary=:all: --progress-bar off -q -r "$requirements" ;;
    uv) uv pip install --python "$python" --no-deps --only-binary=:all: -q -r "$requirements" ;;
    *) echo "install-sglang-contract: INSTALLER=$installer: pip or uv" >&2; exit 2 ;;
esac

# Prove it: import what the contract tests use, through the project's own module.
if ! PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}" "$python" -W ignore - <<'PY'
import sys

from tests.support import sglang_contract as contract

version = contract.sglang_version()
contract.server_args_type()
contract.request_types()
import torch

build = "CPU" if torch.version.cuda is None else f"CUDA {torch.version.cuda}"
print(f"sglang {version} importable: parser and request types (torch {torch.__version__}, {build})")
if version != "0.5.23":
    sys.exit(f"expected sglang 0.5.23, found {version}")
PY
then
    echo "install-sglang-contract: SGLang's parser or request types do not import (see above)" >&2
    exit 1
fi
echo "install-sglang-contract: done in $(( $(date +%s) - start )) s"
