#!/usr/bin/env bash
# E2E allocation per transaction, old vs new, ABBA per workload.
set -e
# Allocation per transaction, old vs new lockstep binary, ABBA per workload
# (docs/benchmarks/notes.md, 2026-11-28): build /tmp/alloc-old and
# /tmp/alloc-new first.
PORT=3481; PP=127.0.0.1:6081
SB="--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --mysql-db=sbtest --tables=4 --table-size=100000"
start() { LOCKSTEP_PPROF=$PP $1 serve --datadir $2 --port $PORT > $2.log 2>&1 & pid=$!
  for i in $(seq 100); do mysql -h127.0.0.1 -P$PORT -uroot -e 'select 1' >/dev/null 2>&1 && break; sleep 0.2; done; }
stop() { kill $pid; wait $pid 2>/dev/null || true; }
talloc() { curl -s "http://$PP/debug/pprof/heap?debug=1" | awk '/^# TotalAlloc = /{print $4}'; }
T=/tmp/allocbench/template
if [ ! -d $T ]; then
  mkdir -p $T; start /tmp/alloc-new $T
  mysql -h127.0.0.1 -P$PORT -uroot -e 'create database sbtest'
  sysbench oltp_read_write $SB --threads=4 prepare >/dev/null 2>&1
  stop
fi
for wl in oltp_point_select oltp_read_only; do
  for b in old new new old; do
    D=/tmp/allocbench/run-$b; rm -rf $D; cp -a $T $D
    start /tmp/alloc-$b $D
    sysbench $wl $SB --threads=16 --time=5 run >/dev/null 2>&1
    a0=$(talloc)
    sysbench $wl $SB --threads=16 --time=20 run > $D.sb 2>&1
    a1=$(talloc)
    stop
    tx=$(awk '/transactions:/ {print $2}' $D.sb); tps=$(awk '/transactions:/ {gsub(/[()]/,"",$3); print $3}' $D.sb)
    echo "$wl $b txns=$tx tps=$tps alloc_bytes=$((a1-a0)) bytes_per_txn=$(( (a1-a0)/tx ))"
  done
done
