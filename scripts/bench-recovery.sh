#!/usr/bin/env bash
# Restart time and replay rate with LOG_MB of log after the last checkpoint
# (issue 7, docs/benchmarks/notes.md).
#
#   scripts/bench-recovery.sh                  # 1 GiB of log: about 10-15 minutes
#   LOG_MB=64 scripts/bench-recovery.sh        # trial
#
# 1. sysbench prepare (TABLES x ROWS) on a server with --checkpoint-log-size 1M, so
#    a checkpoint holds the prepared tables; clean shutdown.
# 2. Restart with --checkpoint-log-size 64G (no checkpoint from here on) and run
#    sysbench oltp_write_only at THREADS until Lockstep_log_bytes >= LOG_MB; the
#    write rate is sampled every 10 s from Lockstep_log_bytes and Binlog_commits
#    ($OUT/write-rate.tsv: the first WARMUP s are not counted in the peak).
# 3. kill -9 while sysbench runs; restart on the same datadir and time it from the
#    start until SELECT 1 answers (polled every 50 ms); VmHWM of the new process at
#    that moment is recovery's peak RSS. The server's recovery lines: $OUT/restart.log.
# The log is still in the page cache at the restart (a cold cache is not measured).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/bench-recovery}; PORT=${PORT:-3433}
LOG_MB=${LOG_MB:-1024}; TABLES=${TABLES:-4}; ROWS=${ROWS:-100000}; THREADS=${THREADS:-16}; WARMUP=${WARMUP:-30}
. scripts/bench-lib.sh
rm -rf "$OUT"; mkdir -p "$OUT"; build_lsm
exec > >(tee "$OUT/summary.txt") 2>&1
echo "$(date -u '+%F %T') UTC, $(uptime)"
SB="--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --mysql-db=sbtest --tables=$TABLES --table-size=$ROWS"

start_fill # bench-lib.sh: a checkpoint holding the prepared tables, then the load
echo -e "t\tlog_bytes\tcommits\tloadavg1" > "$OUT/write-rate.tsv"
while :; do
  b=$(st Lockstep_log_bytes); echo -e "$(now)\t$b\t$(st Binlog_commits)\t$(cut -d" " -f1 /proc/loadavg)" >> "$OUT/write-rate.tsv"
  [ "$b" -lt $((LOG_MB * 1048576)) ] || break
  sleep 10
done
echo "log on disk before the kill: $(du -sm "$OUT/data/log" | cut -f1) MiB in $(ls "$OUT/data/log" | wc -l) segments; checkpoint $(ls "$OUT/data/checkpoint")"
kill -9 "$LS_PID"; wait "$LS_PID" 2>/dev/null || true
kill "$SB_PID" 2>/dev/null; wait "$SB_PID" 2>/dev/null || true
awk -F'\t' -v w="$WARMUP" 'NR == 2 {t0 = $1} NR > 2 {dt = $1 - pt; r = ($2 - pb) / dt; c = ($3 - pc) / dt
    if ($1 - t0 > w && c > mc) {mc = c; mr = r}} NR > 1 {pt = $1; pb = $2; pc = $3; n = $3; tb = $2; tl = $1}
  END {printf "write: %d commits, %.0f MiB in %.0f s: mean %.0f commits/s, %.2f MiB/s; peak 10 s (after %d s): %.0f commits/s, %.2f MiB/s\n",
    n, tb/1048576, tl - t0, n/(tl-t0), tb/1048576/(tl-t0), w, mc, mr/1048576}' "$OUT/write-rate.tsv"

t0=$(now); start_lsm "$OUT/restart.log" --datadir "$OUT/data" --checkpoint-log-size 64G
wait_ready 3600; t1=$(now)
echo "restart: ready $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b-a}') s after the start; VmHWM $(($(kb $LS_PID VmHWM) / 1024)) MiB, VmRSS $(($(kb $LS_PID VmRSS) / 1024)) MiB"
sed 's/^/  /' "$OUT/restart.log"
echo "end: $(uptime)"
