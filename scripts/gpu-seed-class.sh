#!/usr/bin/env bash
# The seed-class profile (qwen3-next-real-width-fp8-mtp) on a GPU runner: noise within and
# between boots, and the depth trade-off with simulated acceptance. Steps and knobs:
# scripts/gpu_seed_class.py. Each call runs the steps it is given (one boot each) and leaves
# everything measured so far, plus summary.md, in STATE (default /tmp/seed-class), and a tar
# of it in OUT_DIR, so a run cut short still returns what it measured.
#
#   scripts/gpu-seed-class.sh OUT_DIR d3 d0            # one boot at depth 3, one at depth 0
#   BACKEND=sim scripts/gpu-seed-class.sh /tmp/out d3  # dry run on the simulator
#
# On the project's lent H200 (no network; the SGLang 0.5.12 bundle parts in /tmp/stash):
# LENT_H200=1.
set -euo pipefail
out=${1:?usage: scripts/gpu-seed-class.sh OUT_DIR STEP [STEP ...]}
shift
state=${STATE:-/tmp/seed-class}
mkdir -p "$out" "$state"
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export SPECPERF_MODEL_CACHE=${SPECPERF_MODEL_CACHE:-/tmp/specperf-model-cache}
if [[ -n ${LENT_H200:-} ]]; then
  mkdir -p /tmp/site /tmp/site-test
  [[ -d /tmp/site/sglang ]] || cat /tmp/stash/part.* | xz -dc | tar -x -C /tmp/site
  # Wheels the image lacks (the history store's sqlalchemy, alembic, ruptures), when carried.
  if compgen -G '.whl/*.whl' >/dev/null && [[ ! -e /tmp/site-test/.installed ]]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
      --target /tmp/site-test .whl/*.whl && touch /tmp/site-test/.installed
  fi
  export PYTHONPATH=/tmp/site:/tmp/site-test:$PWD
fi
python=${PYTHON:-python3}
if [[ ${BACKEND:-sglang} == sglang ]]; then
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$state/gpu.txt"
  "$python" -c 'import sglang; print("sglang", sglang.__version__)' 2>&1 | tail -1 | tee -a "$state/gpu.txt"
fi
"$python" scripts/gpu_seed_class.py "$state" "$@" || echo "gpu_seed_class.py exited $?"
left=$(pgrep -fc 'sglang.launch_server|sglang::' || true)
echo "sglang processes left: ${left:-0}" | tee -a "$state/steps.txt"
tar -C "$(dirname "$state")" -czf "$out/seed-class.tar.gz" "$(basename "$state")"
