#!/usr/bin/env bash
# The device side of the recorded real run: the project's lent H200 machine, which has
# Python 3.12, torch and CUDA but no network. It expects the SGLang 0.5.12 bundle parts
# (built on the CPU machine with shared/tools/real-sglang/build-bundle.sh into .gpu-bundle/)
# already copied to /tmp/stash, and the test dependencies as wheels in .whl/.
#
#   scripts/gpu-smoke-on-lent-h200.sh OUT_DIR [mtp|ngram|all]
set -euo pipefail
out=${1:?usage: OUT_DIR [mtp|ngram|all]}
mkdir -p /tmp/site /tmp/site-test "$out"
if [[ ! -d /tmp/site/sglang ]]; then
  cat /tmp/stash/part.* | xz -dc | tar -x -C /tmp/site
fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site-test .whl/*.whl
# The SGLang bundle first, so that its versions win; the repository for pytest_specperf.
export PYTHONPATH=/tmp/site:/tmp/site-test:$PWD
bash scripts/gpu-smoke.sh "$out" "${2:-all}"
