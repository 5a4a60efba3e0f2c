#!/usr/bin/env bash
# How a client's and the server's threads are scheduled per transaction:
# CPU time, time waiting in the kernel's run queue, and time slices, summed
# over all threads of each process (/proc/PID/task/*/schedstat), over
# seconds 2..6 of a client run of at least 7 s; transactions from the
# server's Questions counter (one statement per point_select transaction).
#
#   scripts/oltp-schedstat.sh PORT SERVER_PID NAME CLIENT_COMMAND...
#   scripts/oltp-schedstat.sh 3471 "$(pgrep -f 'lockstep serve')" sysbench \
#     sysbench oltp_point_select --mysql-host=127.0.0.1 --mysql-port=3471 --mysql-user=root --threads=16 --time=8 run
#   scripts/oltp-schedstat.sh 3471 "$SERVER_PID" bench-oltp \
#     lockstep bench oltp point_select --dsn 'root@tcp(127.0.0.1:3471)/sbtest' --threads 16 --time 8 --report-interval 0
set -euo pipefail
PORT=$1 SP=$2 NAME=$3
shift 3
ss() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{r += $1; w += $2; n += $3} END {printf "%d %d %d", r / 1000, w / 1000, n}'; }
q() { mysql -h127.0.0.1 -P"$PORT" -uroot -N -e "SHOW GLOBAL STATUS LIKE 'Questions'" | awk '{print $2}'; }
"$@" > /dev/null 2>&1 &
P=$!
sleep 2
ca=$(ss $P) sa=$(ss "$SP") qa=$(q)
sleep 4
cb=$(ss $P) sb=$(ss "$SP") qb=$(q)
wait $P
echo "$ca $cb $sa $sb $((qb - qa))" | awk -v n="$NAME" '{q = $13
  printf "%-10s %6.0f tx/s | client: cpu %5.1f us, run-queue wait %5.1f us, slices %.2f | server: cpu %5.1f us, run-queue wait %5.1f us, slices %.2f (per transaction)\n",
    n, q / 4, ($4 - $1) / q, ($5 - $2) / q, ($6 - $3) / q, ($10 - $7) / q, ($11 - $8) / q, ($12 - $9) / q}'
