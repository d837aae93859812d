#!/usr/bin/env bash
# The load generator's ceiling on the GPU host's cores (issue 21, point 4; issue 13): our client
# over 1, 2, 4, 8 processes against the project's reference server firehose.py, then ours beside
# SGLang's own Python (and, where it exists, Rust) benchmark client. No GPU is used; SGLang is
# only needed for the compare (the 0.5.12 bundle on PYTHONPATH, as for the other GPU scripts).
# Everything goes to OUT_DIR, then into one tar, OUT_DIR.tar (a call returns few files).
#
#   lab/gpu/gpu-client-ceiling.sh OUT_DIR FIREHOSE_PY
#   LENT_H200=1 lab/gpu/gpu-client-ceiling.sh $OUT/ceiling ../shared/tools/firehose.py
#   PROCS=1,2 CONCURRENCY=16 TOKENS=200 REPEATS=1 lab/gpu/gpu-client-ceiling.sh /tmp/c fh.py  # dry run
#
# Environment: PROCS (1,2,4,8), CONCURRENCY (256 for procs; compare runs at 64 as
# docs/explanation/load-generator.md), TOKENS (1000), REPEATS (3 for procs, 3 for compare),
# SGLANG_PYTHON (a python that imports sglang; with LENT_H200 the bundle's: python3),
# COMPARE_CONCURRENCY (64),
# COMPARE (1; 0 skips the compare).
set -euo pipefail
out=${1:?usage: lab/gpu/gpu-client-ceiling.sh OUT_DIR FIREHOSE_PY}
firehose=${2:?usage: lab/gpu/gpu-client-ceiling.sh OUT_DIR FIREHOSE_PY}
firehose=$(cd "$(dirname "$firehose")" && pwd)/$(basename "$firehose")
mkdir -p "$out"
out=$(cd "$out" && pwd)
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
python=${PYTHON:-python3}
if [[ -n ${LENT_H200:-} ]]; then
  mkdir -p /tmp/site
  [[ -d /tmp/site/sglang ]] || cat /tmp/stash/part.* | xz -dc | tar -x -C /tmp/site
  export PYTHONPATH=$PYTHONPATH:/tmp/site
  sglang_python=${SGLANG_PYTHON:-$python}
else
  sglang_python=${SGLANG_PYTHON:-}
fi
{
  echo "# client ceiling, $(date -u +%FT%TZ)"
  echo "host: $(nproc) cores, $(uname -m), python $("$python" -c 'import sys; print(sys.version.split()[0])')"
  echo "firehose: $firehose"
} | tee "$out/summary.md"
started=$(date +%s)
"$python" lab/studies/client_overhead.py procs --server "$firehose" --procs "${PROCS:-1,2,4,8}" \
  --concurrency "${CONCURRENCY:-256}" --tokens "${TOKENS:-1000}" --repeats "${REPEATS:-3}" \
  2>&1 | tee "$out/procs.txt"
if [[ ${COMPARE:-1} == 1 ]]; then
  args=(compare --server "$firehose" --concurrency "${COMPARE_CONCURRENCY:-64}"
        --tokens "${TOKENS:-1000}" --repeats "${REPEATS:-3}")
  if [[ -n $sglang_python ]]; then
    args+=(--sglang-python "$sglang_python")
    echo "sglang: $("$sglang_python" -c 'import sglang; print(sglang.__version__)' 2>&1 | tail -1)" \
      | tee -a "$out/summary.md"
  else
    echo "sglang: no SGLANG_PYTHON given: the compare runs our client alone" | tee -a "$out/summary.md"
  fi
  "$python" lab/studies/client_overhead.py "${args[@]}" 2>&1 | tee "$out/compare.txt"
fi
{
  echo
  echo "## procs (tail)"
  tail -n 6 "$out/procs.txt"
  if [[ -f $out/compare.txt ]]; then
    echo
    echo "## compare (tail)"
    tail -n 15 "$out/compare.txt"
  fi
  echo
  echo "$(( $(date +%s) - started )) s in all"
} >> "$out/summary.md"
tar -C "$(dirname "$out")" -cf "$out.tar" "$(basename "$out")"
echo "wrote $out.tar"
