# Sourced by the lab/gpu/gpu-*.sh proofs: what every run on a GPU runner sets up first.
#
# Offline Hugging Face, the model factory's cache, and python=${PYTHON:-python3}. On the
# project's lent H200 (LENT_H200=1, or the bundle parts found in /tmp/stash): the SGLang 0.5.12
# bundle unpacked to /tmp/site once, the wheels the image lacks (.whl/: the history store's
# sqlalchemy, alembic, ruptures, py-spy) installed to /tmp/site-test once, both put on PYTHONPATH.
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export SPECPERF_MODEL_CACHE=${SPECPERF_MODEL_CACHE:-/tmp/specperf-model-cache}
python=${PYTHON:-python3}
if [[ -n ${LENT_H200:-} || -d /tmp/stash ]]; then
  mkdir -p /tmp/site /tmp/site-test
  [[ -d /tmp/site/sglang ]] || cat /tmp/stash/part.* | xz -dc | tar -x -C /tmp/site
  if compgen -G '.whl/*.whl' >/dev/null && [[ ! -e /tmp/site-test/.installed ]]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
      --target /tmp/site-test .whl/*.whl && touch /tmp/site-test/.installed
  fi
  export PYTHONPATH=/tmp/site:/tmp/site-test:$PWD
  # py-spy's executable from its wheel (--specperf-server-stacks reads it from PATH).
  export PATH=/tmp/site-test/bin:$PATH
fi

# One line naming the GPUs and the SGLang version, when SGLang is the backend.
lent_gpu_banner() {
  [[ ${BACKEND:-sglang} == sglang ]] || return 0
  echo "GPUs: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | paste -sd';')"
  echo "sglang $("$python" -c 'import sglang; print(sglang.__version__)' 2>&1 | tail -1)"
}

# The count of SGLang processes a proof left behind, printed and added to the summary file $1.
sglang_left() {
  local left
  left=$(pgrep -fc 'sglang.launch_server|sglang::' || true)
  echo "sglang processes left: ${left:-0}" | tee -a "$1"
}

# A proof with phases, first half: lent_gpu_proof_start NAME OUT_DIR PHASE sets out (OUT_DIR,
# made and absolute), phase and work (WORK_DIR or /tmp/specperf-NAME-proof), prints the banner
# and empties work/PHASE.
lent_gpu_proof_start() {
  mkdir -p "$2"
  out=$(cd "$2" && pwd)
  phase=$3
  lent_gpu_banner
  work=${WORK_DIR:-/tmp/specperf-$1-proof}
  rm -rf "${work:?}/$phase"
}

# Second half, lent_gpu_proof_end NAME: the SGLang processes left, then the phase's folder as
# OUT_DIR/NAME-proof-PHASE.tar.gz.
lent_gpu_proof_end() {
  sglang_left "$work/$phase/summary.md"
  tar -czf "$out/$1-proof-$phase.tar.gz" -C "$work" "$phase"
  echo "output: $out/$1-proof-$phase.tar.gz"
}
