#!/usr/bin/env bash
# Issue 7's write comparison, interleaved: lockstep (durable, the default
# sync_binlog=1), the same binary with --sync-binlog=0, and MariaDB 10.11
# with equal durability, all three prepared once and kept up, then ROUNDS
# rounds, the three taking turns (A B C, then C B A), so that the machine's
# drift falls on all of them. Reports every run, the per-round ratios
# (lockstep / MariaDB, and the cost of durability, 1 - durable / sync0) and
# their medians.
#
#   scripts/bench-write-pairs.sh                       # oltp_write_only, 16 and 64 threads, 5 rounds of 20 s
#   ROUNDS=3 BENCH_THREADS=16 BENCH_TIME=30 scripts/bench-write-pairs.sh
#   LS_BINARY=/tmp/ls BENCH_WORKLOAD=oltp_insert scripts/bench-write-pairs.sh
#   CLIENT=lockstep scripts/bench-write-pairs.sh       # the built-in client instead of sysbench
#
# A thin wrapper of `lockstep bench compare --client sysbench` (docs/bench.md):
# targets lockstep, sync0 (--sync-binlog=0) and mariadb (started by compare:
# innodb_flush_log_at_trx_commit=1, the binary log (ROW) with sync_binlog=1),
# 4 tables x 100,000 rows each; before each run compare waits until no
# server uses more than 5% of a core, and each run is BENCH_WARMUP s of
# unmeasured warm-up, then BENCH_TIME s. Results in $OUT: compare's
# results.md, runs.csv, series.csv and plots, and this summary.
# (PORT_L, PORT_S and PORT_M are no longer used: compare picks free ports.
# Why interleaved: bench-vs-mariadb.sh used to run each system for minutes
# in turn, and two of its runs eight minutes apart gave 1.96x and 0.71x,
# docs/benchmarks/notes.md, session 13.)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-turns-lib.sh

BENCH_WORKLOAD=${BENCH_WORKLOAD:-oltp_write_only}
BENCH_THREADS=${BENCH_THREADS:-"16 64"}
BENCH_TIME=${BENCH_TIME:-20}
BENCH_WARMUP=${BENCH_WARMUP:-5}
ROUNDS=${ROUNDS:-5}
CLIENT=${CLIENT:-sysbench}
OUT=${OUT:-/tmp/lockstep-write-pairs}

if [ "$CLIENT" = sysbench ] && ! command -v sysbench >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sysbench >/dev/null
fi
rm -rf "$OUT"; mkdir -p "$OUT"
if [ -n "${LS_BINARY:-}" ]; then cp "$LS_BINARY" "$OUT/lockstep"; else go build -o "$OUT/lockstep" ./cmd/lockstep; fi

status=0
"$OUT/lockstep" bench compare --client "$CLIENT" \
  --target lockstep="lockstep:$OUT/lockstep" --target sync0="lockstep:$OUT/lockstep:--sync-binlog=0" --target mariadb=mariadb \
  --workloads "$BENCH_WORKLOAD" --threads "$(echo $BENCH_THREADS | tr ' ' ',')" \
  --time "${BENCH_TIME}s" --warmup "${BENCH_WARMUP}s" --rounds "$ROUNDS" --tables 4 --table-size 100000 \
  --out "$OUT" || status=$?

[ -f "$OUT/runs.csv" ] || exit "$status"
echo
echo "$BENCH_WORKLOAD, ${BENCH_TIME}s runs after ${BENCH_WARMUP}s warm-up, $ROUNDS rounds, systems taking turns, client $CLIENT"
# runs.csv: seq,round,target,workload,threads,tps,...
awk -F, "$MEDIAN_AWK"'
  NR > 1 { v[$5 "," $2 "," $3] = $6; if (!($5 in seen)) { seen[$5] = 1; ths[++nt] = $5 } if ($2 > nr) nr = $2 }
  END {
    for (k = 1; k <= nt; k++) {
      th = ths[k]; n = 0
      for (r = 1; r <= nr; r++) {
        l = v[th "," r ",lockstep"]; s = v[th "," r ",sync0"]; m = v[th "," r ",mariadb"]
        if (l == "" || m == 0 || s == 0) continue
        n++; rm[n] = l / m; dc[n] = 1 - l / s; ll[n] = l; ss[n] = s; mm[n] = m
        printf "%s threads, round %d: lockstep %.0f, sync0 %.0f, MariaDB %.0f TPS: %.2fx MariaDB, durability cost %.0f%%\n", th, r, l, s, m, l / m, 100 * (1 - l / s)
      }
      if (n > 0) printf "%s threads, medians: lockstep %.0f, sync0 %.0f, MariaDB %.0f TPS; ratio %.2fx; durability cost %.0f%%\n", th, median(ll, n), median(ss, n), median(mm, n), median(rm, n), 100 * median(dc, n)
    }
  }' "$OUT/runs.csv"
exit "$status"
