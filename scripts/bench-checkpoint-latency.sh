#!/usr/bin/env bash
# Commit latency while checkpoints run (issue 7, docs/benchmarks/notes.md): sysbench
# oltp_write_only at THREADS with checkpoints firing (--checkpoint-log-size SMALL)
# and without (64G), alternating REPS times on one data directory.
# CELLS lists the cells as NAME=FLAG,FLAG... (default: "ckpt=--checkpoint-log-size=$SMALL
# none=--checkpoint-log-size=64G"); each repetition runs them in that order.
#
#   scripts/bench-checkpoint-latency.sh        # 4 x 1,000,000 rows, 2 x 2 cells: 12-20 min
#   ROWS=100000 TIME=20 WARMUP=5 REPS=1 scripts/bench-checkpoint-latency.sh   # trial
#
# The tables are prepared once (checkpoints every 64M meanwhile). Each cell restarts the
# server with its setting (the restart replays the previous cell's log), warms up
# WARMUP s at THREADS (not recorded), then runs TIME s with --percentile=99
# --report-interval=1 ($OUT/CELL.log) while Lockstep_checkpoints and
# Lockstep_checkpoint_last_ms are sampled every 0.5 s ($OUT/CELL-ckpt.tsv). A
# checkpoint occupies [end - last_ms, end] (one still running at the end: from its
# .tmp file on); a sysbench second overlapping one counts as a checkpoint second. Results: $OUT/results.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/bench-ckpt-lat}; PORT=${PORT:-3434}
TABLES=${TABLES:-4}; ROWS=${ROWS:-1000000}; THREADS=${THREADS:-16}
TIME=${TIME:-120}; WARMUP=${WARMUP:-20}; REPS=${REPS:-2}; SMALL=${SMALL:-32M}
CELLS=${CELLS:-"ckpt=--checkpoint-log-size=$SMALL none=--checkpoint-log-size=64G"}
. scripts/bench-lib.sh
rm -rf "$OUT"; mkdir -p "$OUT"; build_lsm
exec > >(tee "$OUT/results.txt") 2>&1
echo "$(date -u '+%F %T') UTC, $(uptime)"
SB="--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --mysql-db=sbtest --tables=$TABLES --table-size=$ROWS"

start_lsm "$OUT/prepare-server.log" --datadir "$OUT/data" --checkpoint-log-size 64M
wait_ready 60
q "CREATE DATABASE sbtest"
sysbench oltp_read_write $SB --threads=4 prepare > "$OUT/prepare.log"
sleep 1; while ls "$OUT"/data/checkpoint/*.tmp >/dev/null 2>&1; do sleep 0.5; done # one may be running
echo "prepared; checkpoint of $(st Lockstep_checkpoint_last_rows) rows took $(st Lockstep_checkpoint_last_ms) ms; $(du -m "$OUT"/data/checkpoint/*.ckpt | cut -f1) MiB"
kill "$LS_PID"; wait "$LS_PID" || true; LS_PID=

for rep in $(seq 1 "$REPS"); do
  for spec in $CELLS; do
    cell=${spec%%=*}-$rep; flags=${spec#*=}
    # shellcheck disable=SC2086 # flags are comma-separated words
    start_lsm "$OUT/$cell-server.log" --datadir "$OUT/data" ${flags//,/ }
    wait_ready 600
    sysbench oltp_write_only $SB --threads="$THREADS" --time="$WARMUP" run > "$OUT/$cell-warmup.log" 2>&1 || true
    (while :; do w=0; ls "$OUT"/data/checkpoint/*.tmp >/dev/null 2>&1 && w=1
      echo -e "$(now)\t$(st Lockstep_checkpoints)\t$(st Lockstep_checkpoint_last_ms)\t$w\t$(cut -d' ' -f1 /proc/loadavg)"; sleep 0.5; done) > "$OUT/$cell-ckpt.tsv" 2>/dev/null &
    SAMPLER_PID=$!
    t0=$(now)
    sysbench oltp_write_only $SB --threads="$THREADS" --time="$TIME" --percentile=99 --report-interval=1 run > "$OUT/$cell.log" 2>&1 || true
    kill "$SAMPLER_PID"; wait "$SAMPLER_PID" 2>/dev/null || true; SAMPLER_PID=
    kill "$LS_PID"; wait "$LS_PID" || true; LS_PID=
    # checkpoint intervals in seconds since sysbench started: finished ones from
    # last_ms, one still running at the end from its .tmp file
    awk -F'\t' -v t0="$t0" 'NR > 1 && $2 > pc {printf "%.2f %.2f\n", $1 - $3/1000 - t0 - 0.5, $1 - t0}
      $4 && !pw {ws = $1} {pc = $2; pw = $4; t = $1} END {if (pw) printf "%.2f %.2f\n", ws - t0 - 0.5, t - t0}' "$OUT/$cell-ckpt.tsv" > "$OUT/$cell-intervals.txt"
    awk -v cell="$cell" 'FILENAME == ARGV[1] {lo[++k] = $1; hi[k] = $2; dur += $2 - $1; next}
      /^\[ *[0-9]+s \]/ {s = $2 + 0; tps = $7; p = $14; in_ck = 0
        for (i = 1; i <= k; i++) if (s > lo[i] && s - 1 < hi[i]) in_ck = 1
        if (in_ck) {n1++; t1 += tps; p1 += p; if (p > m1) m1 = p} else {n0++; t0 += tps; p0 += p; if (p > m0) m0 = p}}
      /transactions:/ {gsub(/[()]/, "", $3); tps_all = $3}
      /99th percentile:/ {p99 = $3}
      END {printf "%-7s TPS %7.1f  p99 %7.2f ms | %d checkpoints, %.1f s | ckpt s: %3d, TPS %7.1f, mean/max 1-s p99 %7.2f/%7.2f | other s: %3d, TPS %7.1f, mean/max 1-s p99 %7.2f/%7.2f\n",
        cell, tps_all, p99, k, dur, n1, n1 ? t1/n1 : 0, n1 ? p1/n1 : 0, m1, n0, n0 ? t0/n0 : 0, n0 ? p0/n0 : 0, m0}' \
      "$OUT/$cell-intervals.txt" "$OUT/$cell.log"
  done
done
echo "end: $(uptime)"
