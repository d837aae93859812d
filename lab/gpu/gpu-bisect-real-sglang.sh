#!/usr/bin/env bash
# Issue 52 on one lent GPU: `specperf bisect` on real SGLang, one driver in the background
# across calls (SGLang 0.5.12 bundle in /tmp/stash, wheels in .whl/ as for the seed nightly:
# sqlalchemy, alembic, mako, greenlet for the history store, nvidia-ml-py for the GPU fields).
#
# lab/gpu/bisect_repo.py builds a repository of 8 commits after c0 (same hashes on every
# machine); from c$SLOW_FROM on, its sitecustomize.py sleeps $BATCH_SLEEP_S before every batch
# of SGLang's scheduler (Scheduler.run_batch, in the spawned scheduler process). Each commit's
# tree goes first on the server's PYTHONPATH, before the bundle:
#   python -m pytest_specperf.cli bisect --repo REPO --good C0 --bad C8 --out $PROOF/bisect \
#     --server-env 'PYTHONPATH={worktree}:$PYTHONPATH' -- --spec-steps=3 \
#     --specperf-backend=sglang --specperf-profile=qwen3-next-real-width-fp8-mtp \
#     --specperf-concurrency=64 --specperf-max-new-tokens=256 --specperf-repeats=3 \
#     --specperf-min-point-seconds=2 --specperf-rotate-server-cpu \
#     '--specperf-server-arg=--cuda-graph-bs 8 16 32 64'
# ('$PYTHONPATH' stays literal: specperf puts its own value there as it starts each server.)
# The sweep is the 2026-12-05 A/B's, where 3 ms a batch on the head read -12.9% and was red
# after 3 pairs (docs/runs/2026-12-05-ladder-slow10-h200); the nightly's 2,048 tokens make
# each step about 60% longer (TPOT 15.6 ms at 3.16 tokens a step on an H100), so the same
# sleep would cost about half as much there and a step would need more pairs to tell. The
# default sleep is 6 ms, twice that A/B's, so that each step decides near the first look of 3
# pairs (lab/gpu/bisect_repo.py says why).
#
# Device seconds (estimates): 8 commits take at most 5 steps (the range, 3 candidates, the
# culprit against its parent), each 3 pairs of boots or more. From lab/gpu/PLAN.md's figures
# at the nightly point (fresh boot 210-230 s, warm about 90 s, a sample at C=64 about 60 s) a
# pair is about 300 s; at this sweep (4 graph sizes, 256 tokens) the A/B measured 622
# server-seconds for 3 pairs, about 210 s a pair. 5 steps of 3 pairs: about 3,100 s (15 pairs);
# of 5 pairs: about 5,200 s. A session of 1,800 s leaves about 1,300 s for pairs after the
# three bundle calls, the machine's start and the fresh first boot: about 6 pairs a session,
# so 3 to 5 sessions. Each session runs the same command; the bisection goes on from the pairs
# in its history store.
#
# Resuming: the pairs are in $PROOF/bisect/history.sqlite; lab/gpu/bisect_watch.py copies it
# after every pair to $PROOF/state/history.sqlite (one consistent file) and, with STOP_AFTER_S
# (seconds from the start; set it to the device time left less about 100 s), stops the
# bisection after the last pair that ends in time. A poll copies that file into $OUT; on the
# CPU machine put it in .specperf/bisect-real-sglang/history.sqlite (ignored by git) and carry
# that folder in the next session's call that starts this driver: it is copied into place
# before the bisection starts. The repository is rebuilt with the same hashes, so the
# bisection's name (range, server env, suite options) and its steps' names match, as long as
# lab/gpu/slow_scheduler_sitecustomize.py and the settings below stay as they were.
#
# Other settings: SLOW_FROM (default 5), BATCH_SLEEP_S (default 0.006), MAX_PAIRS (a step's
# most, default 16), SUITE_EXTRA (more suite options), PAIR_S (a pair's time until one is
# measured, for STOP_AFTER_S; default 230), STATE_DIR (.specperf/bisect-real-sglang, the dry
# run's .specperf/bisect-sim), REPO_DIR.
# A dry run on the simulator (the slow commits add --sim-slowdown to its command line instead):
#   LENT_H200= BACKEND=sim PYTHON=.venv/bin/python PROOF=/tmp/bisect-dry bash lab/gpu/gpu-bisect-real-sglang.sh
set -u
proof=${PROOF:-/tmp/proof}
mkdir -p "$proof"
export LENT_H200=${LENT_H200-1}
source lab/gpu/_lent_gpu.sh
backend=${BACKEND:-sglang}
profile=qwen3-next-real-width-fp8-mtp
repo=${REPO_DIR:-/tmp/bisect-repo}
out=$proof/bisect
slow_from=${SLOW_FROM:-5}
# The dry run keeps its pairs apart from the GPU's (a different bisection, but one store).
state=${STATE_DIR:-.specperf/bisect-real-sglang}
[[ $backend == sim ]] && state=${STATE_DIR:-.specperf/bisect-sim}
if [[ $backend == sim ]]; then
  repo_args=(--slow-from "$slow_from" --sim --sim-slowdown "${SIM_SLOWDOWN:-0.15}")
  suite=(--spec-steps=3 --specperf-backend=sim --specperf-profile=$profile
    --specperf-concurrency=4 --specperf-max-new-tokens=128 --specperf-warmup-rounds=0
    --specperf-min-point-seconds=0.5 --specperf-sim-speedup=10
    --specperf-server-arg=--sim-noise=0.01)
else
  repo_args=(--slow-from "$slow_from" --batch-sleep-s "${BATCH_SLEEP_S:-0.006}")
  suite=(--spec-steps=3 --specperf-backend=sglang --specperf-profile=$profile
    --specperf-concurrency=64 --specperf-max-new-tokens=256 --specperf-repeats=3
    --specperf-min-point-seconds=2 --specperf-rotate-server-cpu
    "--specperf-server-arg=${GRAPHS_FLAG:---cuda-graph-bs} 8 16 32 64")
fi
# Split on spaces, as the other drivers' EXTRA.
suite+=(${SUITE_EXTRA:-})
{
  date -u +"start %FT%TZ"
  lent_gpu_banner
  [[ $backend == sglang ]] && nvidia-smi --query-gpu=name,uuid,driver_version,memory.total --format=csv,noheader 2>&1
  echo "vCPUs: $(nproc); $(grep -m1 'model name' /proc/cpuinfo)"
  command -v git >/dev/null || { echo "no git here: specperf bisect needs it"; exit 1; }
  git --version
  # The sitecustomize each commit's tree shadows, if this Python has one (the tree's runs it).
  echo "this python's own sitecustomize: $("$python" -c 'import sitecustomize; print(sitecustomize.__file__)' 2>&1 | tail -1)"
  # The repository and trees are made anew below: not under a bisection still running.
  pgrep -f -- "cli bisect .*--out $out " >/dev/null && { echo "a bisection into $out runs already"; exit 1; }
  rm -rf "$repo" "$out/worktrees"
  "$python" lab/gpu/bisect_repo.py "$repo" "${repo_args[@]}" | tee "$proof/repo.txt"
  good=$(sed -n 's/^GOOD=//p' "$proof/repo.txt")
  bad=$(sed -n 's/^BAD=//p' "$proof/repo.txt")
  culprit=$(sed -n 's/^CULPRIT=//p' "$proof/repo.txt")
  [[ -n $good && -n $bad ]] || { echo "bisect_repo.py built no repository"; exit 1; }
  if [[ -f $state/history.sqlite && ! -f $out/history.sqlite ]]; then
    mkdir -p "$out" && cp "$state/history.sqlite" "$out/history.sqlite"
    echo "history store from $state/history.sqlite"
  fi
  bisect=("$python" -m pytest_specperf.cli bisect --repo "$repo" --good "$good" --bad "$bad"
    --out "$out" --max-pairs "${MAX_PAIRS:-16}" --server-env 'PYTHONPATH={worktree}:$PYTHONPATH'
    -- "${suite[@]}")
  date -u +"bisect %FT%TZ"
  printf '%q ' "${bisect[@]}"; echo
  "${bisect[@]}" >"$proof/bisect.txt" 2>&1 &
  bisect_pid=$!
  "$python" lab/gpu/bisect_watch.py --pid "$bisect_pid" --store "$out/history.sqlite" \
    --copy "$proof/state/history.sqlite" --pair-s "${PAIR_S:-230}" \
    ${STOP_AFTER_S:+--stop-after-s "$STOP_AFTER_S"} &
  watch_pid=$!
  wait "$bisect_pid"
  echo "bisect exit $?"
  wait "$watch_pid"
  cat "$proof/bisect.txt"
  named=$("$python" -c 'import json, sys; print(json.load(open(sys.argv[1])).get("culprit") or "none")' "$out/bisect.json" 2>&1 | tail -1)
  echo "slowed from c$slow_from $culprit; named: $named"
  if [[ $backend == sglang ]]; then
    # The patch's own line in the servers' logs: how many boots ran a slowed scheduler.
    echo "server logs saying the scheduler was slowed: $(grep -rl --include='*.log' '\[bisect-repo sitecustomize\]' "$out" 2>/dev/null | wc -l)"
    grep -rh --include='*.log' '\[bisect-repo sitecustomize\]' "$out" 2>/dev/null | sed 's/(pid [0-9]*, /(/' | sort | uniq -c
  fi
  sglang_left /dev/null
  date -u +"end %FT%TZ"
} >>"$proof/driver.log" 2>&1
