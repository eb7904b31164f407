#!/usr/bin/env bash
# Interleaved A/B timing of two simulator binaries on one scenario: runs them in turn
# REPS times and prints, per binary, the fastest, median and slowest wall time (the
# spread says how far to trust a difference). Usage: bench/ab.sh BIN_A BIN_B SCENARIO [REPS]
set -euo pipefail
a=$1; b=$2; scenario=$3; reps=${4:-5}
for _ in $(seq "$reps"); do
  for bin in "$a" "$b"; do
    wall=$("$bin" "$scenario" | grep -o '"wall_s": [0-9.]*' | awk '{print $2}')
    echo "$bin $wall"
  done
done | sort -k1,1 -k2,2n | awk '
  { walls[$1] = walls[$1] " " $2; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
  END {
    for (i = 1; i <= n; i++) {
      k = split(walls[order[i]], w, " ")
      print "min", order[i], w[1], "median", w[int((k + 1) / 2)], "max", w[k]
    }
  }'
