#!/usr/bin/env bash
# Instrumentation cost of the metrics endpoint (issue 34, item 2): sysbench
# oltp_point_select and oltp_write_only at 16 threads against one lockstep
# binary with the endpoint off (A) and on and scraped every second (B),
# interleaved A B B A ... on this noisy machine:
#
#   scripts/bench-metrics.sh [ROUNDS] [SECONDS]     (default 2 rounds of ABBA, 15 s)
#
# Each cell: a fresh data directory, 4 x 10,000 rows, 3 s warm-up per
# workload, then SECONDS per workload. Prints one line per cell and the
# medians; with B, also the scrape's own time and size (curl).
set -e
rounds=${1:-2}; t=${2:-15}
BIN=/tmp/lockstep-bench-metrics
go build -o $BIN ./cmd/lockstep
PORT=${PORT:-3480}; MPORT=${MPORT:-9480}
out=/tmp/bench-metrics.txt; : > $out
cell() { # name [serve flags...]
  local name=$1; shift
  local D=/tmp/rexp-metrics-$name; rm -rf $D; mkdir -p $D
  $BIN serve --datadir $D --port $PORT "$@" > $D/server.log 2>&1 &
  local pid=$!
  for i in $(seq 50); do mysql -h127.0.0.1 -P$PORT -uroot -e 'select 1' >/dev/null 2>&1 && break; sleep 0.2; done
  mysql -h127.0.0.1 -P$PORT -uroot -e 'create database sbtest'
  local SB="--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --mysql-db=sbtest --tables=4 --table-size=10000"
  sysbench oltp_read_write $SB --threads=4 prepare >/dev/null 2>&1
  local scraper=""
  if [ "$name" = on ]; then
    ( while true; do curl -s -o /dev/null -w '%{time_total} %{size_download}\n' http://127.0.0.1:$MPORT/metrics >> $D/scrapes.txt; sleep 1; done ) &
    scraper=$!
  fi
  for wl in oltp_point_select oltp_write_only; do
    sysbench $wl $SB --threads=16 --time=3 run >/dev/null 2>&1
    sysbench $wl $SB --threads=16 --time=$t --percentile=95 run > $D/$wl.log 2>&1
    tps=$(awk '/transactions:/ {gsub(/[()]/,"",$3); print $3}' $D/$wl.log)
    p95=$(awk '/95th percentile:/ {print $3}' $D/$wl.log)
    echo "$name $wl tps=$tps p95=$p95" | tee -a $out
  done
  if [ -n "$scraper" ]; then
    kill $scraper; wait $scraper 2>/dev/null || true
    awk '{s+=$1; b=$2; n++} END {printf "on scrapes=%d mean_ms=%.2f bytes=%d\n", n, 1000*s/n, b}' $D/scrapes.txt | tee -a $out
  fi
  kill $pid; wait $pid 2>/dev/null || true
}
for r in $(seq $rounds); do
  cell off; cell on --metrics-address 127.0.0.1:$MPORT
  cell on --metrics-address 127.0.0.1:$MPORT; cell off
done
for wl in oltp_point_select oltp_write_only; do
  for c in off on; do
    grep "^$c $wl " $out | sed 's/.*tps=\([0-9.]*\).*/\1/' | sort -n |
      awk -v c=$c -v wl=$wl '{v[NR]=$1} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "median %s %s tps=%.1f (n=%d)\n", c, wl, m, NR}'
  done
done
