# Sourced by the lab/gpu/gpu-*.sh proofs: what every run on a GPU runner sets up first.
#
# Offline Hugging Face, the model factory's cache, and python=${PYTHON:-python3}. On the
# project's lent H200 (LENT_H200=1, or the bundle parts found in /tmp/stash): the SGLang 0.5.12
# bundle unpacked to /tmp/site once, the wheels the image lacks (.whl/: the history store's
# sqlalchemy, alembic, ruptures) installed to /tmp/site-test once, both put on PYTHONPATH.
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
fi

# One line naming the GPUs and the SGLang version, when SGLang is the backend.
lent_gpu_banner() {
  [[ ${BACKEND:-sglang} == sglang ]] || return 0
  echo "GPUs: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | paste -sd';')"
  echo "sglang $("$python" -c 'import sglang; print(sglang.__version__)' 2>&1 | tail -1)"
}
