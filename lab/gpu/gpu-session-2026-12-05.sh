#!/usr/bin/env bash
# Issue 38's GPU runs of 2026-12-05, one driver in the background across calls on the lent
# H200 (SGLang 0.5.12 bundle in /tmp/stash, wheels in .whl/), in the order of
# lab/gpu/PLAN.md:
#   1. the nightly command three times with --specperf-history on the store of the
#      2026-12-04 evening run (3 comparable runs from earlier machines): the first two add
#      this machine's runs to it, the third reads 5 comparable runs, so its floors carry the
#      spread between machines (issue 38's done-when: green on a fresh machine);
#   2. the boot-to-boot spread under the two placements not measured yet (sglang-affinity,
#      rotate), 3 boots each.
# Everything lands in /tmp/proof (driver.log; each phase's tarball); a poll tars it into $OUT.
set -u
proof=/tmp/proof
mkdir -p "$proof" /tmp/evening
export LENT_H200=1
source lab/gpu/_lent_gpu.sh
{
  date -u +"start %FT%TZ"
  tar -xf lab/runs/2026-12-04-evening-h200/proof.tar.xz -C /tmp/evening proof/nightly-history.sqlite
  cp /tmp/evening/proof/nightly-history.sqlite "$proof/nightly-history.sqlite"
  for n in 1 2 3; do
    date -u +"nightly $n %FT%TZ"
    WORK_DIR=/tmp/testbed-n$n NIGHTLY_ARGS="--specperf-history=$proof/nightly-history.sqlite" \
      bash lab/gpu/gpu-testbed-proof.sh "$proof/nightly$n" nightly
  done
  date -u +"placement %FT%TZ"
  WORK_DIR=/tmp/testbed-placement PLACEMENTS="sglang-affinity rotate" \
    bash lab/gpu/gpu-testbed-proof.sh "$proof" placement
  date -u +"end %FT%TZ"
} >"$proof/driver.log" 2>&1
