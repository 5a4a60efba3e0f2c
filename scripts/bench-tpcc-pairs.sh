#!/usr/bin/env bash
# TPC-C, lockstep against MariaDB 10.11, interleaved: both servers loaded
# once, then PAIRS pairs of runs with the systems taking turns (ABBA order:
# L M, M L, L M, ...), so that the machine's drift falls on both sides.
# Reports every run, each pair's ratio, and the medians.
#
#   scripts/bench-tpcc-pairs.sh                        # 4 warehouses, 16 threads, 3 pairs of 60 s
#   PAIRS=5 TPCC_THREADS=4 TPCC_DURATION=30 scripts/bench-tpcc-pairs.sh
#   LS_BINARY=/tmp/ls LS_FLAGS="--log-compression=OFF" scripts/bench-tpcc-pairs.sh
#
# Why: on this machine (2 shared cores) one binary's tpmC moved from 18.4k to
# 25.8k within minutes (docs/benchmarks/notes.md, session 13); bench-tpcc.sh runs
# one system after the other, a few minutes apart, and its ratio carries that
# drift. Here the two systems alternate every TPCC_DURATION seconds.
#
# Both servers stay up for the whole script (the idle one costs little; it
# is waited on to go quiet before each run: a checkpoint or InnoDB's purge
# left over from its own turn would otherwise run in the other's). Each run
# is `lockstep bench tpcc` with the consistency checks; the server's CPU
# seconds over the measured window come from /proc (utime + stime), shown
# per committed transaction. MariaDB: innodb_flush_log_at_trx_commit=1 and,
# with MDB_BINLOG=1 (default), the binary log with sync_binlog=1 — lockstep's
# durability. Results: $OUT/runs.csv and a summary; exit 1 if a run failed.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-turns-lib.sh

TPCC_WAREHOUSES=${TPCC_WAREHOUSES:-4}
TPCC_THREADS=${TPCC_THREADS:-16}
TPCC_DURATION=${TPCC_DURATION:-60}
TPCC_WARMUP=${TPCC_WARMUP:-10}
TPCC_SCALE_DOWN=${TPCC_SCALE_DOWN:-1}
PAIRS=${PAIRS:-3}
LS_FLAGS=${LS_FLAGS:-}
LS_PORT=${LS_PORT:-3440}
MDB_PORT=${MDB_PORT:-3441}
MDB_BINLOG=${MDB_BINLOG:-1}
OUT=${OUT:-/tmp/lockstep-tpcc-pairs}
export PATH="$PATH:/usr/sbin:/sbin"

if ! command -v mariadbd >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server mariadb-client >/dev/null
fi
rm -rf "$OUT"; mkdir -p "$OUT"
if [ -n "${LS_BINARY:-}" ]; then cp "$LS_BINARY" "$OUT/lockstep"; else go build -o "$OUT/lockstep" ./cmd/lockstep; fi
BENCH="$OUT/lockstep bench tpcc --warehouses $TPCC_WAREHOUSES --scale-down $TPCC_SCALE_DOWN --report-interval 0"

LS_PID=
cleanup() {
  [ -n "$LS_PID" ] && kill "$LS_PID" 2>/dev/null || true
  [ -f "$OUT/mdb.pid" ] && kill "$(cat "$OUT/mdb.pid")" 2>/dev/null || true
}
trap cleanup EXIT


# --- start and load both ---------------------------------------------------
# shellcheck disable=SC2086
"$OUT/lockstep" serve --datadir "$OUT/ls-data" --port "$LS_PORT" $LS_FLAGS > "$OUT/lockstep.log" 2>&1 &
LS_PID=$!
for _ in $(seq 1 60); do mysql -h127.0.0.1 -P"$LS_PORT" -uroot -e "SELECT 1" >/dev/null 2>&1 && break; sleep 0.5; done
. scripts/mariadb-lib.sh
start_mariadb "$OUT" "$MDB_PORT" "$MDB_BINLOG" tpcc tpcc
MDB_PID=$(cat "$OUT/mdb.pid")
LS_DSN="root@tcp(127.0.0.1:$LS_PORT)/tpcc"
MDB_DSN="tpcc:tpcc@tcp(127.0.0.1:$MDB_PORT)/tpcc"
for sys in lockstep mariadb; do
  dsn=$LS_DSN; [ "$sys" = mariadb ] && dsn=$MDB_DSN
  echo "== $sys: loading $TPCC_WAREHOUSES warehouses"
  $BENCH --dsn "$dsn" --threads 4 --load --duration 0 --check=false > "$OUT/$sys-load.log" 2>&1 || {
    echo "$sys: load failed"; tail -3 "$OUT/$sys-load.log"; exit 1; }
done

# --- the pairs ---------------------------------------------------------------
failed=0
echo "pair,system,tpmC,cpu_s,ms_per_txn,txns,checks" > "$OUT/runs.csv"
run() { # pair system
  local pair=$1 sys=$2 dsn=$LS_DSN pid=$LS_PID log="$OUT/$2-$1.log"
  [ "$sys" = mariadb ] && dsn=$MDB_DSN && pid=$MDB_PID
  quiet "$LS_PID" "$MDB_PID"
  $BENCH --dsn "$dsn" --threads "$TPCC_THREADS" --duration "${TPCC_DURATION}s" --warmup "${TPCC_WARMUP}s" > "$log" 2>&1 &
  local bp=$!
  sleep "$TPCC_WARMUP"
  local c0; c0=$(cpu_ticks "$pid")
  wait "$bp" || failed=1
  local c1; c1=$(cpu_ticks "$pid")
  awk -v p="$pair" -v s="$sys" -v c0="$c0" -v c1="$c1" -v tk="$tick" '
    /^tpmC / {t=$2} /^total / {tot=$2} /^result: / {res=$2}
    END {cpu=(c1-c0)/tk; printf "%s,%s,%.0f,%.1f,%.3f,%d,%s\n", p, s, t, cpu, (tot>0 ? cpu*1000/tot : 0), tot, res}' "$log" |
    tee -a "$OUT/runs.csv"
}
for pair in $(seq 1 "$PAIRS"); do
  if [ $((pair % 2)) = 1 ]; then run "$pair" lockstep; run "$pair" mariadb
  else run "$pair" mariadb; run "$pair" lockstep; fi
done
mysql -h127.0.0.1 -P"$LS_PORT" -uroot -e "SHOW GLOBAL STATUS WHERE Variable_name LIKE 'Lockstep_lock%' OR Variable_name LIKE 'Lockstep_group_commit%' OR Variable_name LIKE 'Lockstep_checkpoint%'" > "$OUT/lockstep-status.txt" 2>&1 || true
mariadb -S "$OUT/mdb.sock" -uroot -e "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_row_lock_waits','Innodb_deadlocks','Binlog_commits','Binlog_group_commits')" > "$OUT/mariadb-status.txt" 2>&1 || true
ps -o rss= -p "$LS_PID" | awk '{printf "lockstep RSS: %.0f MiB\n", $1/1024}'
ps -o rss= -p "$MDB_PID" | awk '{printf "mariadbd RSS: %.0f MiB\n", $1/1024}'

# --- summary -----------------------------------------------------------------
echo
echo "threads $TPCC_THREADS, $TPCC_WAREHOUSES warehouses, ${TPCC_DURATION}s runs after ${TPCC_WARMUP}s warm-up, $PAIRS pairs"
awk -F, "$MEDIAN_AWK"'
  NR > 1 { t[$1 "," $2] = $3; c[$1 "," $2] = $5; if ($7 != "PASS") bad = bad " " $2 "/" $1; if ($1 > n) n = $1 }
  END {
    for (p = 1; p <= n; p++) {
      r[p] = t[p ",lockstep"] / t[p ",mariadb"]; cr[p] = c[p ",lockstep"] / c[p ",mariadb"]
      lt[p] = t[p ",lockstep"]; mt[p] = t[p ",mariadb"]; lc[p] = c[p ",lockstep"]; mc[p] = c[p ",mariadb"]
      printf "pair %s: lockstep %s tpmC, MariaDB %s tpmC: %.2fx; CPU ms/txn %s vs %s\n", p, t[p ",lockstep"], t[p ",mariadb"], r[p], c[p ",lockstep"], c[p ",mariadb"]
    }
    printf "median tpmC: lockstep %.0f, MariaDB %.0f; median pair ratio %.2fx\n", median(lt, n), median(mt, n), median(r, n)
    printf "median server CPU ms per transaction: lockstep %.3f, MariaDB %.3f (ratio %.2fx)\n", median(lc, n), median(mc, n), median(cr, n)
    printf "consistency checks: %s\n", (bad == "" ? "all PASS" : "FAILED:" bad)
  }' "$OUT/runs.csv"
exit "$failed"
