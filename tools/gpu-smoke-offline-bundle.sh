#!/usr/bin/env bash
# tools/gpu-smoke.sh on a GPU machine without network access: Python, torch and CUDA are
# there, SGLang is not. It unpacks a prebuilt SGLang bundle (built where there is network with
# shared/tools/real-sglang/build-bundle.sh, copied over as its part.* files) and installs the
# test dependencies from wheels carried in .whl/, then runs the smoke script against them.
#
#   BUNDLE_DIR=<dir with part.*> tools/gpu-smoke-offline-bundle.sh OUT_DIR [mtp|ngram|all]
#
# BUNDLE_DIR defaults to /tmp/stash; SITE_DIR (where the bundle is unpacked, default
# /tmp/site) is reused when it already holds sglang.
set -euo pipefail
out=${1:?usage: OUT_DIR [mtp|ngram|all]}
bundle=${BUNDLE_DIR:-/tmp/stash}
site=${SITE_DIR:-/tmp/site}
mkdir -p "$site" "$site-test" "$out"
if [[ ! -d "$site/sglang" ]]; then
  cat "$bundle"/part.* | xz -dc | tar -x -C "$site"
fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site-test" .whl/*.whl
# The SGLang bundle first, so that its versions win; the repository for pytest_specperf.
export PYTHONPATH="$site:$site-test:$PWD"
bash tools/gpu-smoke.sh "$out" "${2:-all}"
