#!/usr/bin/env bash
# Issue 7's write comparison, interleaved: lockstep (durable, the default
# sync_binlog=1), the same binary with --sync-binlog=0, and MariaDB 10.11
# with equal durability, all three prepared once and kept up, then ROUNDS
# rounds per thread count, the three taking turns in a rotating order, so
# that the machine's drift falls on all of them. Reports every run, the
# per-round ratios (lockstep / MariaDB, and the cost of durability,
# 1 - durable / sync0) and their medians.
#
#   scripts/bench-write-pairs.sh                       # oltp_write_only, 16 and 64 threads, 5 rounds of 20 s
#   ROUNDS=3 BENCH_THREADS=16 BENCH_TIME=30 scripts/bench-write-pairs.sh
#   LS_BINARY=/tmp/ls BENCH_WORKLOAD=oltp_insert scripts/bench-write-pairs.sh
#
# Why: bench-vs-mariadb.sh runs each system for minutes in turn, and two of
# its runs eight minutes apart gave 1.96x and 0.71x (docs/benchmarks/notes.md,
# session 13). Each server gets 4 tables x 100,000 rows (sysbench prepare);
# before each run the script waits until no server uses more than 5% of a
# core, then warms the one about to run for BENCH_WARMUP s. MariaDB:
# innodb_flush_log_at_trx_commit=1 and the binary log (ROW) with
# sync_binlog=1. Results: $OUT/runs.csv and a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-turns-lib.sh

BENCH_WORKLOAD=${BENCH_WORKLOAD:-oltp_write_only}
BENCH_THREADS=${BENCH_THREADS:-"16 64"}
BENCH_TIME=${BENCH_TIME:-20}
BENCH_WARMUP=${BENCH_WARMUP:-5}
ROUNDS=${ROUNDS:-5}
OUT=${OUT:-/tmp/lockstep-write-pairs}
PORT_L=${PORT_L:-3480}
PORT_S=${PORT_S:-3481}
PORT_M=${PORT_M:-3482}
export PATH="$PATH:/usr/sbin:/sbin"

if ! command -v sysbench >/dev/null 2>&1 || ! command -v mariadbd >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sysbench mariadb-server mariadb-client >/dev/null
fi
rm -rf "$OUT"; mkdir -p "$OUT"
if [ -n "${LS_BINARY:-}" ]; then cp "$LS_BINARY" "$OUT/lockstep"; else go build -o "$OUT/lockstep" ./cmd/lockstep; fi

PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -f "$OUT/mdb.pid" ] && kill "$(cat "$OUT/mdb.pid")" 2>/dev/null || true
}
trap cleanup EXIT

start_ls() { # name port flags...
  local name=$1 port=$2; shift 2
  "$OUT/lockstep" serve --datadir "$OUT/$name-data" --port "$port" "$@" > "$OUT/$name.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 60); do mysql -h127.0.0.1 -P"$port" -uroot -e "SELECT 1" >/dev/null 2>&1 && break; sleep 0.5; done
  mysql -h127.0.0.1 -P"$port" -uroot -e "CREATE DATABASE sbtest"
}
start_ls lockstep "$PORT_L"
start_ls sync0 "$PORT_S" --sync-binlog=0
. scripts/mariadb-lib.sh
start_mariadb "$OUT" "$PORT_M" 1 sbtest sbtest
mariadb -S "$OUT/mdb.sock" -uroot -e "CREATE DATABASE sbtest"
PID_L=${PIDS[0]}; PID_S=${PIDS[1]}; PID_M=$(cat "$OUT/mdb.pid")

sbopts() { # system
  case $1 in
    lockstep) echo "--mysql-host=127.0.0.1 --mysql-port=$PORT_L --mysql-user=root" ;;
    sync0) echo "--mysql-host=127.0.0.1 --mysql-port=$PORT_S --mysql-user=root" ;;
    mariadb) echo "--mysql-host=127.0.0.1 --mysql-port=$PORT_M --mysql-user=sbtest --mysql-password=sbtest" ;;
  esac
}
common="--db-driver=mysql --mysql-db=sbtest --tables=4 --table-size=100000 --report-interval=0"
for sys in lockstep sync0 mariadb; do
  # shellcheck disable=SC2046
  sysbench oltp_read_write $common $(sbopts $sys) --threads=4 prepare > "$OUT/$sys-prepare.log" 2>&1
done


echo "threads,round,system,tps,p95_ms,errors" > "$OUT/runs.csv"
run() { # threads round system
  local th=$1 r=$2 sys=$3 log="$OUT/$3-t$1-r$2.log"
  quiet "$PID_L" "$PID_S" "$PID_M"
  # shellcheck disable=SC2046
  sysbench "$BENCH_WORKLOAD" $common $(sbopts "$sys") --threads="$th" --time="$BENCH_WARMUP" run > /dev/null 2>&1 || true
  # shellcheck disable=SC2046
  sysbench "$BENCH_WORKLOAD" $common $(sbopts "$sys") --threads="$th" --time="$BENCH_TIME" --percentile=95 run > "$log" 2>&1 || true
  awk -v th="$th" -v r="$r" -v s="$sys" '/transactions:/ {gsub(/[()]/,"",$3); tps=$3} /95th percentile:/ {p95=$3} /^ *errors:/ {err=$2}
    END {printf "%s,%s,%s,%s,%s,%s\n", th, r, s, tps+0, p95+0, err+0}' "$log" | tee -a "$OUT/runs.csv"
}
orders=("lockstep sync0 mariadb" "mariadb lockstep sync0" "sync0 mariadb lockstep")
for th in $BENCH_THREADS; do
  for r in $(seq 1 "$ROUNDS"); do
    for sys in ${orders[$(( (r - 1) % 3 ))]}; do run "$th" "$r" "$sys"; done
  done
done
mysql -h127.0.0.1 -P"$PORT_L" -uroot -e "SHOW GLOBAL STATUS WHERE Variable_name IN ('Binlog_commits','Binlog_group_commits','Lockstep_commits_per_fsync_x100')" > "$OUT/lockstep-status.txt" 2>&1 || true

echo
echo "$BENCH_WORKLOAD, ${BENCH_TIME}s runs after ${BENCH_WARMUP}s warm-up, $ROUNDS rounds, systems rotating"
awk -F, "$MEDIAN_AWK"'
  NR > 1 { v[$1 "," $2 "," $3] = $4; if (!($1 in seen)) { seen[$1] = 1; ths[++nt] = $1 } if ($2 > nr) nr = $2 }
  END {
    for (k = 1; k <= nt; k++) {
      th = ths[k]; n = 0
      for (r = 1; r <= nr; r++) {
        l = v[th "," r ",lockstep"]; s = v[th "," r ",sync0"]; m = v[th "," r ",mariadb"]
        if (l == "" || m == 0 || s == 0) continue
        n++; rm[n] = l / m; dc[n] = 1 - l / s; ll[n] = l; ss[n] = s; mm[n] = m
        printf "%s threads, round %d: lockstep %.0f, sync0 %.0f, MariaDB %.0f TPS: %.2fx MariaDB, durability cost %.0f%%\n", th, r, l, s, m, l / m, 100 * (1 - l / s)
      }
      printf "%s threads, medians: lockstep %.0f, sync0 %.0f, MariaDB %.0f TPS; ratio %.2fx; durability cost %.0f%%\n", th, median(ll, n), median(ss, n), median(mm, n), median(rm, n), 100 * median(dc, n)
    }
  }' "$OUT/runs.csv"
