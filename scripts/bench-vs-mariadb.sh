#!/usr/bin/env bash
# Side-by-side sysbench matrix: lockstep and MariaDB 10.11 on this machine, in
# one run, one system at a time (the machine has two cores).
#
#   scripts/bench-vs-mariadb.sh            # full matrix (about 45 minutes)
#   BENCH_TIME=10 BENCH_THREADS="16" BENCH_WORKLOADS=oltp_point_select scripts/bench-vs-mariadb.sh
#   # durability: lockstep durable, lockstep sync_binlog=0, MariaDB with binlog + sync_binlog=1
#   LS_CONFIGS="lockstep: lockstep-sync0:--sync-binlog=0" MDB_BINLOG=1 \
#     BENCH_WORKLOADS="oltp_write_only oltp_insert" scripts/bench-vs-mariadb.sh
#
# MariaDB runs alone (no replica), InnoDB with innodb_flush_log_at_trx_commit=1;
# with MDB_BINLOG=1 also the binary log (ROW format) with sync_binlog=1, which is
# lockstep's durability (one log, fsynced per commit group). LS_CONFIGS lists the
# lockstep configurations to run, space-separated NAME:ARGS with ARGS
# comma-separated serve flags (default "lockstep:", the defaults); an ARGS item
# @VAR=VALUE is run as SET GLOBAL VAR=VALUE once the server is up (e.g.
# "lockstep-nofast:@lockstep_fast_path=OFF"). Each starts on a fresh data
# directory. All get 4 tables x 100,000 rows.
# Results: CSV in $OUT/results.csv and a ratio table on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH_TIME=${BENCH_TIME:-30}
BENCH_WARMUP=${BENCH_WARMUP:-10}
BENCH_THREADS=${BENCH_THREADS:-"1 4 16 64"}
BENCH_WORKLOADS=${BENCH_WORKLOADS:-"oltp_point_select oltp_read_only oltp_read_write oltp_write_only"}
BENCH_TABLES=${BENCH_TABLES:-4}
BENCH_ROWS=${BENCH_ROWS:-100000}
OUT=${OUT:-/tmp/lockstep-bench}
LS_PORT=${LS_PORT:-3410}
LS_CONFIGS=${LS_CONFIGS:-"lockstep:"}
MDB_BINLOG=${MDB_BINLOG:-0}
MDB_PORT=${MDB_PORT:-3411}
export PATH="$PATH:/usr/sbin:/sbin"

need() { command -v "$1" >/dev/null 2>&1; }
if ! need sysbench || ! need mariadbd; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sysbench mariadb-server mariadb-client >/dev/null
fi

rm -rf "$OUT"; mkdir -p "$OUT"
CSV=$OUT/results.csv
echo "engine,workload,threads,tps,qps,p95_ms,errors,ignored_errors" > "$CSV"

# parse a sysbench 1.0.20 log -> "tps qps p95 errors ignored"
sb_parse() {
  awk '/transactions:/ {gsub(/[()]/,"",$3); tps=$3}
       /queries:/ && !/performed/ {gsub(/[()]/,"",$3); qps=$3}
       /ignored errors:/ {ign=$3}
       /^ *errors:/ {err=$2}
       /95th percentile:/ {p95=$3}
       END {printf "%s %s %s %s %s\n", tps+0, qps+0, p95+0, err+0, ign+0}' "$1"
}

matrix() { # engine sysbench-connection-options
  local engine=$1; shift
  local sb="$* --tables=$BENCH_TABLES --table-size=$BENCH_ROWS --report-interval=0"
  sysbench oltp_read_write $sb --threads=4 prepare > "$OUT/$engine-prepare.log" 2>&1
  for wl in $BENCH_WORKLOADS; do
    # warm-up at 16 threads, not recorded
    sysbench "$wl" $sb --threads=16 --time="$BENCH_WARMUP" run > "$OUT/$engine-$wl-warmup.log" 2>&1 || true
    for th in $BENCH_THREADS; do
      local log="$OUT/$engine-$wl-t$th.log"
      timeout $((BENCH_TIME + 120)) sysbench "$wl" $sb --threads="$th" --time="$BENCH_TIME" --percentile=95 run > "$log" 2>&1 || true
      read -r tps qps p95 err ign < <(sb_parse "$log")
      echo "$engine,$wl,$th,$tps,$qps,$p95,$err,$ign" | tee -a "$CSV"
    done
  done
}

# --- lockstep -----------------------------------------------------------
go build -o "$OUT/lockstep" ./cmd/lockstep
LS_PID=
trap '[ -n "$LS_PID" ] && kill $LS_PID 2>/dev/null || true; [ -f "$OUT/mdb.pid" ] && kill "$(cat "$OUT/mdb.pid")" 2>/dev/null || true' EXIT
for conf in $LS_CONFIGS; do
  name=${conf%%:*}
  args=
  globals=
  IFS=, read -ra items <<< "${conf#*:}"
  for it in "${items[@]}"; do
    case "$it" in
      @*) globals="$globals SET GLOBAL ${it#@};" ;;
      ?*) args="$args,$it" ;;
    esac
  done
  rm -rf "$OUT/ls-data-$name"
  # shellcheck disable=SC2086
  "$OUT/lockstep" serve --datadir "$OUT/ls-data-$name" --port "$LS_PORT" ${args//,/ } > "$OUT/$name.log" 2>&1 &
  LS_PID=$!
  for i in $(seq 1 60); do mysql -h127.0.0.1 -P"$LS_PORT" -uroot -e "SELECT 1" >/dev/null 2>&1 && break; sleep 0.5; done
  mysql -h127.0.0.1 -P"$LS_PORT" -uroot -e "$globals CREATE DATABASE sbtest"
  matrix "$name" --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$LS_PORT" --mysql-user=root --mysql-db=sbtest
  mysql -h127.0.0.1 -P"$LS_PORT" -uroot -e "SHOW GLOBAL STATUS WHERE Variable_name LIKE 'Binlog%' OR Variable_name LIKE 'Lockstep_group_commit%' OR Variable_name LIKE 'Lockstep_log%' OR Variable_name LIKE 'Lockstep_commits_per%' OR Variable_name LIKE 'Lockstep_fast%'" > "$OUT/$name-status.txt" 2>&1 || true
  kill "$LS_PID"; wait "$LS_PID" 2>/dev/null || true
  LS_PID=
done

# --- MariaDB ------------------------------------------------------------
. scripts/mariadb-lib.sh
start_mariadb "$OUT" "$MDB_PORT" "$MDB_BINLOG" sbtest sbtest
mariadb -S "$OUT/mdb.sock" -uroot -e "CREATE DATABASE sbtest"
matrix mariadb --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$MDB_PORT" --mysql-user=sbtest --mysql-password=sbtest --mysql-db=sbtest
mariadb-admin -S "$OUT/mdb.sock" -uroot shutdown || true

# --- ratios -------------------------------------------------------------
echo
echo "engine workload threads tps qps qps_vs_mariadb p95_ms mariadb_p95_ms"
awk -F, 'NR>1 {k=$2" "$3; if ($1=="mariadb") {mq[k]=$5; mp[k]=$6} else {e[NR]=$1; ek[NR]=k; t[NR]=$4; q[NR]=$5; p[NR]=$6}}
  END {for (i in e) printf "%s %s %s %s %.2f %s %s\n", e[i], ek[i], t[i], q[i], (mq[ek[i]]>0 ? q[i]/mq[ek[i]] : 0), p[i], mp[ek[i]]}' "$CSV" | sort
