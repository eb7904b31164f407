#!/usr/bin/env bash
# Interleaved A/B timing of two simulator binaries on one scenario: prints each run's
# wall time and the minimum per binary. Usage: bench/ab.sh BIN_A BIN_B SCENARIO [REPS]
set -euo pipefail
a=$1; b=$2; scenario=$3; reps=${4:-5}
for _ in $(seq "$reps"); do
  for bin in "$a" "$b"; do
    wall=$("$bin" "$scenario" | grep -o '"wall_s": [0-9.]*' | awk '{print $2}')
    echo "$bin $wall"
  done
done | sort -k1,1 -k2,2n | awk '{ if ($1 != last) { print "min", $1, $2; last = $1 } }'
