#!/usr/bin/env bash
# TPC-C (lockstep bench tpcc) against lockstep and MariaDB 10.11 on this
# machine, in one run, one system at a time (the machine has two cores).
#
#   scripts/bench-tpcc.sh                      # 4 warehouses, 4 and 16 threads, 60 s after 10 s warm-up
#   TPCC_DURATION=20 TPCC_WARMUP=5 TPCC_THREADS=4 SYSTEMS=lockstep scripts/bench-tpcc.sh
#
# Each configuration gets a fresh server and data directory, loads
# TPCC_WAREHOUSES warehouses at full scale (100,000 items, 3,000 customers per
# district) with `lockstep bench tpcc --load`, then runs each thread count in
# TPCC_THREADS in turn on that database (the 16-thread run starts where the
# 4-thread run left the data), each followed by the consistency checks of
# TPC-C Clause 3.3.2.
#
# LS_CONFIGS lists lockstep configurations, space-separated NAME:ARGS with ARGS
# comma-separated serve flags; an item @VAR=VALUE is run as SET GLOBAL
# VAR=VALUE once the server is up (as in bench-vs-mariadb.sh). The default runs
# the fast path on (the default) and off.
# MariaDB: InnoDB with innodb_flush_log_at_trx_commit=1, and with MDB_BINLOG=1
# (the default here) also the binary log (ROW) with sync_binlog=1: lockstep's
# durability (one log, fsynced per commit group).
# LS_BINARY runs a prebuilt lockstep binary instead of building this tree
# (A/B runs of two commits).
# Results: $OUT/results.csv, one log per run, and a summary on stdout. The
# script exits 1 if any run failed (errors or a failed check).
set -euo pipefail
cd "$(dirname "$0")/.."

TPCC_WAREHOUSES=${TPCC_WAREHOUSES:-4}
TPCC_THREADS=${TPCC_THREADS:-"4 16"}
TPCC_DURATION=${TPCC_DURATION:-60}
TPCC_WARMUP=${TPCC_WARMUP:-10}
TPCC_SCALE_DOWN=${TPCC_SCALE_DOWN:-1}
TPCC_LOAD_THREADS=${TPCC_LOAD_THREADS:-4}
SYSTEMS=${SYSTEMS:-"lockstep mariadb"}
LS_CONFIGS=${LS_CONFIGS:-"lockstep: lockstep-nofast:@lockstep_fast_path=OFF"}
LS_PORT=${LS_PORT:-3420}
MDB_PORT=${MDB_PORT:-3421}
MDB_BINLOG=${MDB_BINLOG:-1}
OUT=${OUT:-/tmp/lockstep-tpcc}
export PATH="$PATH:/usr/sbin:/sbin"

if [[ " $SYSTEMS " == *" mariadb "* ]] && ! command -v mariadbd >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server mariadb-client >/dev/null
fi

rm -rf "$OUT"; mkdir -p "$OUT"
CSV=$OUT/results.csv
echo "system,threads,tpmC,p95_new_order_ms,p95_payment_ms,p95_order_status_ms,p95_delivery_ms,p95_stock_level_ms,retries_1213,retries_1205,errors,checks" > "$CSV"
if [ -n "${LS_BINARY:-}" ]; then cp "$LS_BINARY" "$OUT/lockstep"; else go build -o "$OUT/lockstep" ./cmd/lockstep; fi
BENCH="$OUT/lockstep bench tpcc --warehouses $TPCC_WAREHOUSES --scale-down $TPCC_SCALE_DOWN --report-interval 10"
failed=0

# parse a bench report -> CSV fields after system,threads
parse() {
  awk '/^tpmC / {tpmc=$2}
       /^(New-Order|Payment|Order-Status|Delivery|Stock-Level) / {p95[$1]=$5}
       /^total / {r1213=$(NF-2); r1205=$(NF-1); err=$NF}
       /^result: / {res=$2}
       END {printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", tpmc, p95["New-Order"], p95["Payment"], p95["Order-Status"],
            p95["Delivery"], p95["Stock-Level"], r1213, r1205, err, res}' "$1"
}

# runs <name> <dsn>: load, then one run per thread count
runs() {
  local name=$1 dsn=$2
  echo "== $name: loading $TPCC_WAREHOUSES warehouses"
  $BENCH --dsn "$dsn" --threads "$TPCC_LOAD_THREADS" --load --duration 0 --check=false > "$OUT/$name-load.log" 2>&1 || {
    echo "$name: load failed (see $OUT/$name-load.log)"; tail -3 "$OUT/$name-load.log"; failed=1; return; }
  grep '^tpcc: loaded' "$OUT/$name-load.log"
  for th in $TPCC_THREADS; do
    local log="$OUT/$name-t$th.log"
    echo "== $name: $th threads, ${TPCC_WARMUP}s warm-up, ${TPCC_DURATION}s measured"
    if ! timeout $((TPCC_DURATION + TPCC_WARMUP + 900)) $BENCH --dsn "$dsn" --threads "$th" \
        --duration "$TPCC_DURATION" --warmup "$TPCC_WARMUP" > "$log" 2>&1; then
      failed=1
    fi
    echo "$name,$th,$(parse "$log")" | tee -a "$CSV"
  done
}

LS_PID=
cleanup() {
  [ -n "$LS_PID" ] && kill "$LS_PID" 2>/dev/null || true
  [ -f "$OUT/mdb.pid" ] && kill "$(cat "$OUT/mdb.pid")" 2>/dev/null || true
}
trap cleanup EXIT

# --- lockstep -----------------------------------------------------------
if [[ " $SYSTEMS " == *" lockstep "* ]]; then
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
    for _ in $(seq 1 60); do mysql -h127.0.0.1 -P"$LS_PORT" -uroot -e "SELECT 1" >/dev/null 2>&1 && break; sleep 0.5; done
    [ -n "$globals" ] && mysql -h127.0.0.1 -P"$LS_PORT" -uroot -e "$globals"
    runs "$name" "root@tcp(127.0.0.1:$LS_PORT)/tpcc"
    mysql -h127.0.0.1 -P"$LS_PORT" -uroot -e "SHOW GLOBAL VARIABLES LIKE 'lockstep_fast_path'; SHOW GLOBAL STATUS WHERE Variable_name LIKE 'Lockstep_fast%' OR Variable_name LIKE 'Lockstep_group_commit%' OR Variable_name LIKE 'Lockstep_lock%' OR Variable_name LIKE 'Lockstep_dead%'" > "$OUT/$name-status.txt" 2>&1 || true
    ps -o rss= -p "$LS_PID" | awk '{printf "lockstep RSS after the runs: %.0f MiB\n", $1/1024}' | tee -a "$OUT/$name-status.txt"
    kill "$LS_PID"; wait "$LS_PID" 2>/dev/null || true
    LS_PID=
  done
fi

# --- MariaDB ------------------------------------------------------------
if [[ " $SYSTEMS " == *" mariadb "* ]]; then
  . scripts/mariadb-lib.sh
  start_mariadb "$OUT" "$MDB_PORT" "$MDB_BINLOG" tpcc tpcc
  mdbname=mariadb
  [ "$MDB_BINLOG" = 1 ] && mdbname=mariadb-binlog
  runs "$mdbname" "tpcc:tpcc@tcp(127.0.0.1:$MDB_PORT)/tpcc"
  mariadb -S "$OUT/mdb.sock" -uroot -e "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_row_lock_waits','Innodb_deadlocks','Binlog_commits','Binlog_group_commits')" > "$OUT/$mdbname-status.txt" 2>&1 || true
  mariadb-admin -S "$OUT/mdb.sock" -uroot shutdown || true
fi

# --- summary ------------------------------------------------------------
echo
echo "system threads tpmC vs_mariadb p95_ms(NO P OS D SL) retries(1213/1205) errors checks"
awk -F, 'NR>1 {sys[NR]=$1; th[NR]=$2; t[NR]=$3; p[NR]=$4" "$5" "$6" "$7" "$8; r[NR]=$9"/"$10; e[NR]=$11; c[NR]=$12
               if ($1 ~ /^mariadb/) m[$2]=$3}
  END {for (i=2; i<=NR; i++) printf "%s %s %s %s %s %s %s %s\n", sys[i], th[i], t[i],
         (m[th[i]]>0 ? sprintf("%.2fx", t[i]/m[th[i]]) : "-"), p[i], r[i], e[i], c[i]}' "$CSV"
exit "$failed"
