#!/usr/bin/env bash
# Issue 38's GPU runs owed after 2026-12-05 (lab/gpu/PLAN.md), one driver in the
# background across calls on a lent H200 (the seed-class model needs more than an H100's
# 78 GiB: ask for the H200; SGLang 0.5.12 bundle in /tmp/stash, wheels in .whl/ with
# py-spy's for --specperf-server-stacks):
#   1. bounds: the seed point (C=64, 2,048 tokens) and the NGRAM smoke's C=16 side by side,
#      each sample's scheduler stack read by py-spy: GPU busy, the scheduler's share, its wait
#      for the GPU, and the bound each gets (about 340 + 120 s warm, +150 s fresh);
#   2. slow10: an A/B of a head slowed by /slow_down on the seed-class A/A's sweep (C=16, 64,
#      256 tokens, R=3, rotation, graphs 8-64), at most 3 pairs, reading the A/A's history
#      store (3 pairs of 2026-12-05, hardware 1x-h200) as the runner's prior (about 660 s).
# ORDER (default "bounds slow10") picks the phases and their order ("ladder" measures what each
# /slow_down sleep costs on one boot and sets SLOW10 to the one it finds for -10%, or skips
# slow10 where it finds none; 2026-12-05: 531 s for 6 sleeps with the boot); BOUNDS_RUNS=seed leaves
# the NGRAM point out when the device budget is short; AB_CONCURRENCY (default 16,64) the A/B's
# points, SLOW10 its sleep (gpu_ab_proof.py; on the seed class at C=64, 3 ms cost 12.9%:
# docs/runs/2026-12-05-ladder-slow10-h200).
# Everything lands in /tmp/proof (driver.log, each phase's work folder); a poll tars it into $OUT.
set -u
proof=/tmp/proof
mkdir -p "$proof"
# A dry run on the simulator: LENT_H200= BACKEND=sim GRAPHS_FLAG=--cuda-graph-bs-decode.
export LENT_H200=${LENT_H200-1}
source lab/gpu/_lent_gpu.sh
# SGLang 0.5.12's flag; 0.5.15 and later (and the simulator) name it --cuda-graph-bs-decode.
graphs="'--specperf-server-arg=${GRAPHS_FLAG:---cuda-graph-bs} 8 16 32 64'"
# The A/A's store: the prior of the A/B (read and added to: keep the copy, not the tarball).
# PRIOR_TARBALL: the newest run's store (2026-12-05 third session: 6 pairs of this sweep).
tar -xf "${PRIOR_TARBALL:-lab/runs/2026-12-05-bounds-slow10-h200/proof.tar.xz}" -C "$proof" \
  --strip-components=1 proof/ab-history.sqlite
{
  date -u +"start %FT%TZ"
  echo "py-spy: $(command -v py-spy || echo 'not found')"
  "$python" -c 'from pytest_specperf.server.gpu_wait import ptrace_problem as p; print("ptrace:", p() or "py-spy may read the server")'
  # What a /slow_down sleep takes on this machine (on the seed-class profile any sleep cost
  # about 15% at C=1 on 2026-12-02, where 0.05 ms of an 11 ms step would be 0.5%).
  "$python" -c 'import statistics as s, time
for want in (0.00005, 0.00012, 0.0003, 0.001):
    took = []
    for _ in range(200):
        t = time.perf_counter(); time.sleep(want); took.append(time.perf_counter() - t)
    print(f"time.sleep({want}): median {s.median(took) * 1e3:.3f} ms, p90 {s.quantiles(took, n=10)[-1] * 1e3:.3f} ms")'
  # auto: where py-spy may not read the server the runs go on without the stacks (said above).
  export STACKS=auto
  for phase in ${ORDER:-bounds slow10}; do
    date -u +"$phase %FT%TZ"
    case $phase in
      bounds)
        WORK_DIR=$proof/testbed WARMUP_S=90 SEED_ARGS="$graphs --specperf-concurrency=64" \
          bash lab/gpu/gpu-testbed-proof.sh "$proof" bounds ;;
      ladder)
        # One boot: what each sleep costs at one point; the sleep it finds for -10% (measured
        # within 3 points, else fitted within the sleeps' range) becomes SLOW10.
        "$python" lab/gpu/slowdown_ladder.py "$proof/ladder" --backend "${BACKEND:-sglang}" \
          --profile qwen3-next-real-width-fp8-mtp --concurrency "${LADDER_CONCURRENCY:-64}" \
          --sleeps ${LADDER_SLEEPS:-0.002 0.003 0.004 0.005} \
          "--server-arg=${GRAPHS_FLAG:---cuda-graph-bs}" --server-arg=8 --server-arg=16 \
          --server-arg=32 --server-arg=64 | tee "$proof/ladder.txt"
        found=$(sed -n 's/^SLOW=//p' "$proof/ladder.txt" | tail -1)
        if [[ -n $found ]]; then export SLOW10=$found && echo "SLOW10=$SLOW10"
        else echo "ladder: no sleep found for -10%: slow10 skipped"; no_slow10=1; fi ;;
      slow10)
        [[ -n ${no_slow10:-} ]] && continue
        WORK_DIR=$proof/ab PROFILE=qwen3-next-real-width-fp8-mtp MAX_PAIRS=3 \
          SWEEP="--specperf-concurrency=${AB_CONCURRENCY:-16,64} --specperf-max-new-tokens=256 --specperf-repeats=3 --specperf-min-point-seconds=2 --specperf-rotate-server-cpu $graphs ${graphs/server-arg/base-server-arg} --specperf-history=$proof/ab-history.sqlite" \
          bash lab/gpu/gpu-ab-proof.sh "$proof" slow10 ;;
    esac
  done
  date -u +"end %FT%TZ"
} >"$proof/driver.log" 2>&1
