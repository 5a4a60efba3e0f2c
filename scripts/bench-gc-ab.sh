#!/usr/bin/env bash
# One sysbench cell against one lockstep binary, counting the server's
# garbage collections during the measured run (GODEBUG=gctrace=1), for A/B
# runs of two builds taking turns on this noisy machine:
#
#   scripts/bench-gc-ab.sh NAME BINARY WORKLOAD THREADS SECONDS
#   for r in 1 2; do for b in old new new old; do scripts/bench-gc-ab.sh $b /tmp/ls-$b oltp_read_only 16 20; done; done
#
# Fresh data directory (/tmp/gcab-NAME, port $PORT or 3493), 4 x 100,000
# rows, 5 s warm-up, then SECONDS measured. Prints one line: TPS, average
# and p95 latency (ms), collections during the run and per 1,000
# transactions, and the load average at the end.
set -e
name=$1; BIN=$2; wl=$3; th=$4; t=$5
D=/tmp/gcab-$name; rm -rf $D; mkdir -p $D
PORT=${PORT:-3493}
GODEBUG=gctrace=1 $BIN serve --datadir $D/d --port $PORT > $D/server.log 2>&1 &
pid=$!
for i in $(seq 50); do mysql -h127.0.0.1 -P$PORT -uroot -e 'select 1' >/dev/null 2>&1 && break; sleep 0.2; done
mysql -h127.0.0.1 -P$PORT -uroot -e 'create database sbtest'
SB="--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --mysql-db=sbtest --tables=4 --table-size=100000"
sysbench oltp_read_write $SB --threads=4 prepare >/dev/null 2>&1
sysbench $wl $SB --threads=$th --time=5 run >/dev/null 2>&1
g0=$(grep -c '^gc ' $D/server.log)
sysbench $wl $SB --threads=$th --time=$t --percentile=95 run > $D/sb.log 2>&1
g1=$(grep -c '^gc ' $D/server.log)
kill $pid; wait $pid 2>/dev/null || true
tps=$(awk '/transactions:/ {gsub(/[()]/,"",$3); print $3}' $D/sb.log)
tx=$(awk '/transactions:/ {print $2}' $D/sb.log)
p95=$(awk '/95th percentile:/ {print $3}' $D/sb.log)
avg=$(awk '/avg:/ {print $2}' $D/sb.log)
echo "$name $wl th=$th tps=$tps avg=$avg p95=$p95 gcs=$((g1-g0)) gc_per_1000tx=$(echo "scale=2; 1000*($g1-$g0)/$tx" | bc) load=$(cut -d' ' -f1 /proc/loadavg)"
