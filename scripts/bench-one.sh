#!/usr/bin/env bash
# One sysbench cell against one lockstep binary, for A/B runs of two builds
# or two flag sets alternating on this noisy machine:
#
#   scripts/bench-one.sh NAME BINARY WORKLOAD THREADS SECONDS [serve flags...]
#   scripts/bench-one.sh pre ./lockstep oltp_write_only 16 20
#   scripts/bench-one.sh nopre ./lockstep oltp_write_only 16 20 --log-preallocate=off
#
# Starts BINARY on a fresh data directory (/tmp/rexp-NAME, port $PORT or
# 3470), prepares 4 x $TABLE_SIZE rows (100,000), warms up $WARMUP s (5),
# runs SECONDS, stops the server and prints one line: NAME WORKLOAD threads
# TPS p95 commits/group and the server's CPU time (user + system, from
# /proc) per transaction over the measured window — steadier than TPS on
# this shared machine when two builds are compared.
#
# For an A/B pair, `lockstep bench compare --client sysbench` does the
# alternation (ABBA rounds, quiet waits, medians and paired ratios), e.g.
#   lockstep bench compare --client sysbench --target pre=lockstep:./lockstep \
#     --target nopre=lockstep:./lockstep:--log-preallocate=off --workloads write_only --threads 16 --time 20s --rounds 4
# This script stays for one cell on one server and its commits per group
# (docs/bench.md, "The pair scripts").
set -e
name=$1; BIN=$2; wl=$3; th=$4; t=$5; shift 5
D=/tmp/rexp-$name; rm -rf $D; mkdir -p $D
PORT=${PORT:-3470}
$BIN serve --datadir $D --port $PORT "$@" > $D/server.log 2>&1 &
pid=$!
for i in $(seq 50); do mysql -h127.0.0.1 -P$PORT -uroot -e 'select 1' >/dev/null 2>&1 && break; sleep 0.2; done
mysql -h127.0.0.1 -P$PORT -uroot -e 'create database sbtest'
SB="--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --mysql-db=sbtest --tables=4 --table-size=${TABLE_SIZE:-100000}"
sysbench oltp_read_write $SB --threads=4 prepare >/dev/null 2>&1
sysbench $wl $SB --threads=$th --time=${WARMUP:-5} run >/dev/null 2>&1
cpu() { awk '{print $14 + $15}' /proc/$pid/stat; } # utime + stime, clock ticks
c0=$(cpu)
sysbench $wl $SB --threads=$th --time=$t --percentile=95 run > $D/sb.log 2>&1
c1=$(cpu)
gc=$(mysql -h127.0.0.1 -P$PORT -uroot -N -e "show global status like 'Binlog_%commits'" 2>/dev/null | awk '{v[$1]=$2} END {if (v["Binlog_group_commits"]>0) printf "%.2f", v["Binlog_commits"]/v["Binlog_group_commits"]}')
kill $pid; wait $pid 2>/dev/null || true
tps=$(awk '/transactions:/ {gsub(/[()]/,"",$3); print $3}' $D/sb.log)
p95=$(awk '/95th percentile:/ {print $3}' $D/sb.log)
txns=$(awk '/transactions:/ {print $2}' $D/sb.log)
read -r cpums cpuus < <(awk -v d=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" -v n="$txns" 'BEGIN {if (n > 0) printf "%.3f %.2f\n", d * 1000 / hz / n, d * 1000000 / hz / n}') || true
echo "$name $wl th=$th tps=$tps p95=$p95 commits/group=$gc server_cpu_ms_per_txn=$cpums server_cpu_us_per_txn=$cpuus"
