#!/usr/bin/env bash
# Memory per row and GC cost of a loaded server (issue 35 item 3;
# docs/benchmarks/notes.md, "Memory per row at 4 x 1M sysbench rows"):
#
#   scripts/bench-memrow.sh NAME BINARY ROWS_PER_TABLE [SECONDS] [THREADS]
#   scripts/bench-memrow.sh old /tmp/memrow/lockstep-old 1000000 30 16
#
# Starts BINARY on a fresh data directory (/tmp/memrow/d-NAME, port $PORT or
# 3471, metrics on PORT+1000, pprof on PORT+2000), prepares 4 tables of
# ROWS_PER_TABLE sysbench rows, then prints one line: the prepare time, the
# server's VmRSS after the load, its live heap after a forced GC (pprof's
# HeapAlloc) and VmRSS after that GC, then runs oltp_point_select at THREADS
# (default 16) for 5 s of warm-up and SECONDS (default 30) measured, and adds
# its qps and the GC's share of the server's CPU over the measured run
# (go_cpu_classes_gc_total_cpu_seconds_total / go_cpu_classes_total_cpu_seconds_total),
# the number of GCs in it and the load average. KEEP=1 leaves the data
# directory in place.
set -e
name=$1; BIN=$2; rows=$3; t=${4:-30}; th=${5:-16}
PORT=${PORT:-3471}; MP=$((PORT + 1000)); PP=$((PORT + 2000))
D=/tmp/memrow/d-$name; rm -rf "$D"; mkdir -p "$D"
LOCKSTEP_PPROF=127.0.0.1:$PP "$BIN" serve --datadir "$D" --port "$PORT" \
  --metrics-address 127.0.0.1:$MP >"$D/server.log" 2>&1 </dev/null &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 300); do mariadb -h127.0.0.1 -P"$PORT" -uroot -e 'select 1' >/dev/null 2>&1 && break; sleep 0.2; done
mariadb -h127.0.0.1 -P"$PORT" -uroot -e 'create database sbtest'
SB="--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --mysql-db=sbtest --tables=4 --table-size=$rows"
t0=$(date +%s)
sysbench oltp_read_write $SB --threads=4 prepare >"$D/prepare.log" 2>&1
prep=$(($(date +%s) - t0))
sleep 5
rss() { awk '$1=="VmRSS:" {printf "%.0f", $2 / 1024}' /proc/$pid/status; }
rss1=$(rss)
heap=$(curl -s "http://127.0.0.1:$PP/debug/pprof/heap?debug=1&gc=1" | awk '/^# HeapAlloc =/ {printf "%.0f", $4 / 1048576}')
curl -s "http://127.0.0.1:$PP/debug/pprof/heap?gc=1" >"$D/heap.pprof"
sleep 1
rss2=$(rss)
snap() { curl -s -m 60 "http://127.0.0.1:$MP/metrics" >"$D/metrics.$1"; }
metric() { awk -v m="$1" '$1==m {print $2}' "$D/metrics.$2"; }
sysbench oltp_point_select $SB --threads="$th" --time=5 run >/dev/null 2>&1
snap 0
g0=$(metric go_cpu_classes_gc_total_cpu_seconds_total 0); a0=$(metric go_cpu_classes_total_cpu_seconds_total 0)
n0=$(metric go_gc_cycles_total_gc_cycles_total 0)
sysbench oltp_point_select $SB --threads="$th" --time="$t" run >"$D/point_select.log" 2>&1
snap 1
g1=$(metric go_cpu_classes_gc_total_cpu_seconds_total 1); a1=$(metric go_cpu_classes_total_cpu_seconds_total 1)
n1=$(metric go_gc_cycles_total_gc_cycles_total 1)
rss3=$(rss)
qps=$(awk '/queries:/ {gsub(/[()]/,"",$3); print $3}' "$D/point_select.log")
gcpct=$(awk -v g0="$g0" -v g1="$g1" -v a0="$a0" -v a1="$a1" 'BEGIN {if (a1 > a0) printf "%.1f", 100 * (g1 - g0) / (a1 - a0)}')
gcs=$(awk -v n0="$n0" -v n1="$n1" 'BEGIN {printf "%d", n1 - n0}')
echo "$name rows=4x$rows prepare=${prep}s rss=${rss1}MB heap-after-gc=${heap}MB rss-after-gc=${rss2}MB" \
  "point_select th=$th qps=$qps gc-cpu=${gcpct}% gcs=$gcs rss-after-run=${rss3}MB load=$(cut -d' ' -f1-3 /proc/loadavg)"
kill $pid; wait $pid 2>/dev/null || true
[ -n "${KEEP:-}" ] || rm -rf "$D/log"
