#!/usr/bin/env bash
# Restart with LOG_MB of log after the checkpoint, serial vs parallel replay,
# in the same run (issue 31 item 6; docs/benchmarks/notes.md "Recovery: serial vs
# parallel replay").
#
#   scripts/bench-recovery-workers.sh                   # 1 GiB, WORKERS="1 4", 3 rounds
#   LOG_MB=64 ROUNDS=1 scripts/bench-recovery-workers.sh # trial
#   REUSE=1 scripts/bench-recovery-workers.sh           # restarts only, on $OUT/data
#
# 1-2 as scripts/bench-recovery.sh: sysbench prepare into a checkpoint, then
#    oltp_write_only at THREADS until LOG_MB of log follows it; kill -9.
# 3. The crashed data directory is kept; each restart runs on a fresh copy of
#    it with --replica-parallel-workers W, W in WORKERS, the order rotating
#    each round (1 4, 4 1, ...), timed from the start until SELECT 1 answers.
#    Each restart's recovery lines (replayed records, rate) go to
#    $OUT/restart-R-W.log; the checksums of the tables after each restart
#    must be equal.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/bench-recovery-workers}; PORT=${PORT:-3435}
LOG_MB=${LOG_MB:-1024}; TABLES=${TABLES:-4}; ROWS=${ROWS:-100000}; THREADS=${THREADS:-16}
WORKERS=${WORKERS:-"1 4"}; ROUNDS=${ROUNDS:-3}
. scripts/bench-lib.sh
REUSE=${REUSE:-0}
if [ "$REUSE" = 1 ]; then rm -f "$OUT/lockstep"; else rm -rf "$OUT"; fi
mkdir -p "$OUT"; build_lsm
exec > >(tee -a "$OUT/summary.txt") 2>&1
echo "$(date -u '+%F %T') UTC, $(uptime), binary $(git rev-parse --short HEAD)"
SB="--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --mysql-db=sbtest --tables=$TABLES --table-size=$ROWS"

if [ "$REUSE" != 1 ]; then
start_fill # bench-lib.sh: a checkpoint holding the prepared tables, then the load
t0=$(now)
while [ "$(st Lockstep_log_bytes)" -lt $((LOG_MB * 1048576)) ]; do sleep 5; done
commits=$(st Binlog_commits); t1=$(now)
kill -9 "$LS_PID"; wait "$LS_PID" 2>/dev/null || true
kill "$SB_PID" 2>/dev/null; wait "$SB_PID" 2>/dev/null || true
echo "fill: $commits commits in $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.0f", b-a}') s; log $(du -sm "$OUT/data/log" | cut -f1) MiB after the checkpoint"
fi

sums=""
for r in $(seq 1 "$ROUNDS"); do
  order=$WORKERS
  [ $((r % 2)) -eq 0 ] && order=$(echo "$WORKERS" | tr ' ' '\n' | tac | tr '\n' ' ')
  for w in $order; do
    rm -rf "$OUT/run"; cp -a "$OUT/data" "$OUT/run"; sync
    a=$(now); start_lsm "$OUT/restart-$r-$w.log" --datadir "$OUT/run" --checkpoint-log-size 64G --replica-parallel-workers "$w"
    wait_ready 3600; b=$(now)
    sum=""
    for i in $(seq 1 "$TABLES"); do
      sum="$sum$(q "SELECT CONCAT(COUNT(*), ':', SUM(CRC32(CONCAT_WS('#', id, k, c, pad)))) FROM sbtest.sbtest$i") "
    done
    echo "round $r workers $w: ready in $(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", b-a}') s; VmHWM $(($(kb $LS_PID VmHWM) / 1024)) MiB; checksums $sum"
    grep -i "replay\|recover" "$OUT/restart-$r-$w.log" | tail -3 | sed 's/^/    /'
    [ -z "$sums" ] && sums=$sum
    [ "$sum" = "$sums" ] || { echo "checksums differ"; exit 1; }
    kill "$LS_PID"; wait "$LS_PID" || true
  done
done
echo "end: $(uptime)"
