#!/usr/bin/env bash
# Issue 38's GPU runs of 2026-12-04 (evening), one driver in the background across calls on
# the lent H200 (SGLang 0.5.12 bundle in /tmp/stash, wheels in .whl/):
#   1. history stores from earlier lent H200s' results (lab/runs/): the nightly's (2,048
#      tokens) and the A/B's (256 tokens, pairs of earlier comparisons: the prior);
#   2. the nightly command with --specperf-history (fingerprint, GPU busy, bound);
#   3. an A/B of a /slow_down of 0.00006 s (measured -10.1% on 2026-12-04) with the prior;
#   4. boot-to-boot spread under the CPU placements none, pin-fastest, sglang-affinity.
# Everything lands in /tmp/proof (summary.md per phase); a poll tars it into $OUT.
set -u
proof=/tmp/proof
mkdir -p "$proof"
export LENT_H200=1
source lab/gpu/_lent_gpu.sh
runs=lab/runs
{
  date -u +"start %FT%TZ"
  "$python" -m pytest_specperf.cli history import --history "$proof/nightly-history.sqlite" \
    "$runs/2026-12-01-gate-proof-ngram/attempt2/gate-boot1/results.json" \
    "$runs/2026-12-01-gate-proof-ngram/attempt2/record/results.json" \
    "$runs/2026-12-03-seed-class-h200/ngram/record/results.json"
  "$python" -m pytest_specperf.cli history import --history "$proof/ab-history.sqlite" \
    "$runs/2026-12-04-rotation-h200/aa/results.json" \
    "$runs/2026-12-04-rotation-h200/slow5/results.json" \
    "$runs/2026-12-04-placement-h200/flag/results.json"
  date -u +"nightly %FT%TZ"
  NIGHTLY_ARGS="--specperf-history=$proof/nightly-history.sqlite" \
    bash lab/gpu/gpu-testbed-proof.sh "$proof" nightly
  date -u +"ab %FT%TZ"
  SWEEP="--specperf-concurrency=1,4,16 --specperf-max-new-tokens=256 --specperf-repeats=3 --specperf-min-point-seconds=2 --specperf-rotate-server-cpu --specperf-history=$proof/ab-history.sqlite" \
    MAX_PAIRS=3 bash lab/gpu/gpu-ab-proof.sh "$proof" slow5
  date -u +"placement %FT%TZ"
  PLACEMENTS="none pin-fastest sglang-affinity" bash lab/gpu/gpu-testbed-proof.sh "$proof" placement
  date -u +"end %FT%TZ"
} >"$proof/driver.log" 2>&1
