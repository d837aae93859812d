#!/usr/bin/env bash
# One poll of a driver running in the background on the lent machine: waits until its
# driver.log holds a line matching PATTERN (grep -E) or SECONDS have passed, whichever comes
# first, then prints the log's tail and tars the proof folder into $OUT. It tars in every case:
# a poll whose wait runs out still brings back what the phase has written so far (on
# 2026-12-06 a hand-written loop waited past the call's limit, was killed, and its tar never
# ran). Keep SECONDS some 20 s under the call's timeout_s.
#   bash lab/gpu/poll.sh 540 '^(red|end) '      PROOF=/tmp/proof by default
set -u
seconds=${1:?usage: lab/gpu/poll.sh SECONDS [PATTERN]}
pattern=${2:-^end }
proof=${PROOF:-/tmp/proof}
deadline=$((SECONDS + seconds))
while ((SECONDS < deadline)); do
  grep -Eq -- "$pattern" "$proof/driver.log" 2>/dev/null && break
  sleep 1
done
tail -n "${TAIL:-30}" "$proof/driver.log" 2>/dev/null || echo "no $proof/driver.log yet"
if [[ -n ${OUT:-} ]]; then
  tar -czf "$OUT/proof.tar.gz" -C "$(dirname "$proof")" "$(basename "$proof")"
fi
