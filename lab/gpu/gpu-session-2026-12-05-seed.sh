#!/usr/bin/env bash
# Issue 38's GPU runs of 2026-12-05 (second session), one driver in the background across calls
# on the lent H200 (SGLang 0.5.12 bundle in /tmp/stash, wheels in .whl/):
#   1. the seed-class-gpu-bound run profile at C=64 only (2,048 tokens; C=16 of the A/A
#      stands for the lower point): is C=64 GPU-bound? First: it fits what device time is
#      left after three refused starts; the A/A (about 800 s) may not.
#   2. an A/A of the seed-class profile (qwen3-next-real-width-fp8-mtp, depth 3) at C=16 and
#      C=64, 256 tokens, rotation, at most 3 pairs, into a history store: its verdict, the
#      pairs' spread at these points, each point's GPU busy share and bound, and the runner's
#      A/B history that a later A/B on this hardware reads as its prior;
# Both capture CUDA graphs at 8, 16, 32 and 64 only (--cuda-graph-bs; the profile's default
# captures 35 sizes up to 64, about a minute a boot): the points run at 16 and 64.
# Everything lands in /tmp/proof (driver.log, each phase's work folder); a poll tars it into $OUT.
set -u
proof=/tmp/proof
mkdir -p "$proof"
export LENT_H200=1
source lab/gpu/_lent_gpu.sh
graphs="'--specperf-server-arg=--cuda-graph-bs 8 16 32 64'"
{
  date -u +"start %FT%TZ"
  date -u +"seedpoint %FT%TZ"
  WORK_DIR=$proof/testbed WARMUP_S=90 SEED_ARGS="$graphs --specperf-concurrency=64" \
    bash lab/gpu/gpu-testbed-proof.sh "$proof" seedpoint
  date -u +"aa %FT%TZ"
  WORK_DIR=$proof/ab PROFILE=qwen3-next-real-width-fp8-mtp MAX_PAIRS=3 \
    SWEEP="--specperf-concurrency=16,64 --specperf-max-new-tokens=256 --specperf-repeats=3 --specperf-min-point-seconds=2 --specperf-rotate-server-cpu $graphs ${graphs/server-arg/base-server-arg} --specperf-history=$proof/ab-history.sqlite" \
    bash lab/gpu/gpu-ab-proof.sh "$proof" aa
  date -u +"end %FT%TZ"
} >"$proof/driver.log" 2>&1
