#!/usr/bin/env bash
# TPC-C by a driver that is not lockstep's own: Percona-Lab's sysbench-tpcc
# (Lua scripts for sysbench 1.0.x), against lockstep and MariaDB 10.11,
# taking turns (ABBA: round 1 lockstep then MariaDB, round 2 MariaDB then
# lockstep, ...), with per-transaction-type counts and latencies.
#
#   scripts/bench-sysbench-tpcc.sh                     # 4 warehouses, 16 threads, 2 rounds of 60 s
#   ROUNDS=1 TIME=20 scripts/bench-sysbench-tpcc.sh    # a short check that both servers run it
#   LS_BINARY=/tmp/ls LS_FLAGS="--log-compression=OFF" scripts/bench-sysbench-tpcc.sh
#
# sysbench-tpcc is not part of this project (GPL; copy none of it in):
#   git clone https://github.com/Percona-Lab/sysbench-tpcc /tmp/sysbench-tpcc
# SYSBENCH_TPCC_DIR names the clone (default /tmp/sysbench-tpcc; when that
# is missing and SYSBENCH_TPCC_MIRROR, a git repository of it, exists, it is
# cloned from there). Its tpcc.lua is run through scripts/sysbench-tpcc-timed.lua
# (this project's), which times each transaction by type.
#
# Each server is loaded once on a fresh data directory (`prepare` with
# --tables=$TABLES --scale=$SCALE, $LOAD_THREADS threads); both stay up, and
# before each run the script waits for both to go quiet. A run is WARMUP
# seconds of the workload (not measured), then TIME seconds measured, at
# THREADS. Per run: transactions/s, tpmC (New-Order transactions completed
# per minute, the 1% the script rolls back for an unused item included, as
# TPC-C counts them), sysbench's p95, failed attempts (deadlocks, lock wait
# timeouts: sysbench retries them), reconnects, and per transaction type its
# count, average and p95 latency. After each lockstep run (CHECK=1) and, with
# CHECK_MARIADB=1, each MariaDB run, sysbench-tpcc's consistency checks
# (tpcc_check.lua) run for every warehouse, cut off after CHECK_TIMEOUT s.
#
# MariaDB: innodb_flush_log_at_trx_commit=1, binary log (ROW) with
# sync_binlog=1 (scripts/mariadb-lib.sh) - lockstep's durability. sysbench-tpcc
# sets foreign_key_checks=0 in every connection, so USE_FK=1 would only
# declare the keys (their indexes exist either way); the default leaves them
# out. Results: $OUT/runs.csv, $OUT/types.csv and a summary with the
# per-system medians and lockstep's ratios. Exit 1 if a run failed.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-turns-lib.sh

SCALE=${SCALE:-4}
TABLES=${TABLES:-1}
THREADS=${THREADS:-16}
TIME=${TIME:-60}
WARMUP=${WARMUP:-10}
ROUNDS=${ROUNDS:-2}
USE_FK=${USE_FK:-0}
TRX_LEVEL=${TRX_LEVEL:-RR}
LOAD_THREADS=${LOAD_THREADS:-4}
CHECK=${CHECK:-1}
CHECK_MARIADB=${CHECK_MARIADB:-0}
CHECK_TIMEOUT=${CHECK_TIMEOUT:-600}
LS_FLAGS=${LS_FLAGS:-}
LS_PORT=${LS_PORT:-3450}
MDB_PORT=${MDB_PORT:-3451}
OUT=${OUT:-/tmp/lockstep-sysbench-tpcc}
SYSBENCH_TPCC_DIR=${SYSBENCH_TPCC_DIR:-/tmp/sysbench-tpcc}
SYSBENCH_TPCC_MIRROR=${SYSBENCH_TPCC_MIRROR:-/work/.mirror/Percona-Lab+sysbench-tpcc/repo}
export PATH="$PATH:/usr/sbin:/sbin"

if [ ! -f "$SYSBENCH_TPCC_DIR/tpcc.lua" ]; then
  if [ -d "$SYSBENCH_TPCC_MIRROR" ]; then
    git clone -q "$SYSBENCH_TPCC_MIRROR" "$SYSBENCH_TPCC_DIR"
  else
    echo "no sysbench-tpcc in $SYSBENCH_TPCC_DIR; get it with" >&2
    echo "  git clone https://github.com/Percona-Lab/sysbench-tpcc $SYSBENCH_TPCC_DIR" >&2
    exit 1
  fi
fi
export SYSBENCH_TPCC_DIR
command -v sysbench >/dev/null || { echo "sysbench (1.0.14 or later) is needed" >&2; exit 1; }
if ! command -v mariadbd >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server mariadb-client >/dev/null
fi
TIMED=$PWD/scripts/sysbench-tpcc-timed.lua

rm -rf "$OUT"; mkdir -p "$OUT"
if [ -n "${LS_BINARY:-}" ]; then cp "$LS_BINARY" "$OUT/lockstep"; else go build -o "$OUT/lockstep" ./cmd/lockstep; fi

LS_PID=
cleanup() {
  [ -n "$LS_PID" ] && kill "$LS_PID" 2>/dev/null || true
  [ -f "$OUT/mdb.pid" ] && kill "$(cat "$OUT/mdb.pid")" 2>/dev/null || true
}
trap cleanup EXIT

# sb SYSTEM: sysbench-tpcc's options for SYSTEM (lockstep or mariadb)
sb() {
  local conn="--mysql-port=$LS_PORT --mysql-user=root"
  [ "$1" = mariadb ] && conn="--mysql-port=$MDB_PORT --mysql-user=tpcc --mysql-password=tpcc"
  echo "--db-driver=mysql --mysql-host=127.0.0.1 $conn --mysql-db=sbt --tables=$TABLES --scale=$SCALE --use_fk=$USE_FK --trx_level=$TRX_LEVEL"
}
port() { if [ "$1" = mariadb ]; then echo "$MDB_PORT"; else echo "$LS_PORT"; fi; }
asql() { # SYSTEM SQL...: run SQL as the benchmark's account
  if [ "$1" = mariadb ]; then mysql -h127.0.0.1 -P"$MDB_PORT" -utpcc -ptpcc "${@:2}"; else mysql -h127.0.0.1 -P"$LS_PORT" -uroot "${@:2}"; fi
}

# --- start both and load them --------------------------------------------------
# shellcheck disable=SC2086
"$OUT/lockstep" serve --datadir "$OUT/ls-data" --port "$LS_PORT" $LS_FLAGS > "$OUT/lockstep.log" 2>&1 &
LS_PID=$!
ready "$LS_PORT"
. scripts/mariadb-lib.sh
start_mariadb "$OUT" "$MDB_PORT" 1 tpcc tpcc
MDB_PID=$(cat "$OUT/mdb.pid")
for sys in lockstep mariadb; do
  echo "== $sys: loading $SCALE warehouses ($TABLES table set)"
  asql "$sys" -e "CREATE DATABASE sbt"
  t0=$SECONDS
  # shellcheck disable=SC2046
  sysbench "$TIMED" $(sb "$sys") --threads="$LOAD_THREADS" prepare > "$OUT/$sys-prepare.log" 2>&1 || {
    echo "$sys: prepare failed"; tail -5 "$OUT/$sys-prepare.log"; exit 1; }
  echo "   $((SECONDS - t0)) s"
done

# --- one run -------------------------------------------------------------------
failed=0
echo "round,system,load1,tps,tpmC,p95_ms,failed,reconnects,new_order_n,new_order_ms,payment_n,payment_ms,orderstatus_n,orderstatus_ms,delivery_n,delivery_ms,stocklevel_n,stocklevel_ms,check" > "$OUT/runs.csv"
echo "round,system,type,count,avg_ms,p95_ms,failed,rollbacks" > "$OUT/types.csv"

# check SYSTEM LOG: sysbench-tpcc's consistency checks -> PASS, FAIL or
# INCOMPLETE (cut off by CHECK_TIMEOUT; the server's queries are killed)
check() {
  local sys=$1 log=$2
  # shellcheck disable=SC2046
  timeout "$CHECK_TIMEOUT" stdbuf -oL sysbench "$TIMED" $(sb "$sys") --threads="$SCALE" check > "$log" 2>&1 || true
  # a cut-off check leaves its statements running in the server
  asql "$sys" -N -e "SHOW PROCESSLIST" 2>/dev/null | awk -F'\t' '$5 == "Query" && $8 !~ /PROCESSLIST/ {print $1}' |
    while read -r id; do asql "$sys" -e "KILL $id" 2>/dev/null || true; done
  # "Check N, warehouse: W PASSED|FAILED!!!" for N in 1-5 7-10 12
  awk -v w="$SCALE" '
    /^Check [0-9]+, warehouse: [0-9]+ PASSED$/ { sub(/,/, "", $2); ok[$2]++ }
    /^Check [0-9]+, warehouse: [0-9]+ FAILED/ { sub(/,/, "", $2); bad[$2]++ }
    END {
      split("1 2 3 4 5 7 8 9 10 12", all, " ")
      for (i = 1; i <= 10; i++) { c = all[i]
        if (c in bad) f = f (f == "" ? "" : "+") c
        else if (ok[c] < w) u = u (u == "" ? "" : "+") c }
      if (f != "") print "FAIL(" f ")"
      else if (u != "") print "INCOMPLETE(others passed; unfinished " u ")"
      else print "PASS"
    }' "$log"
}

run() { # ROUND SYSTEM
  local round=$1 sys=$2 log="$OUT/$2-$1.log" chk=-
  quiet "$LS_PID" "$MDB_PID"
  local load1; load1=$(cut -d' ' -f1 /proc/loadavg)
  if [ "$WARMUP" -gt 0 ]; then
    # shellcheck disable=SC2046
    sysbench "$TIMED" $(sb "$sys") --threads="$THREADS" --time="$WARMUP" run > "$OUT/$sys-$round-warmup.log" 2>&1 || {
      echo "$sys round $round: warm-up failed"; tail -3 "$OUT/$sys-$round-warmup.log"; failed=1; }
  fi
  # shellcheck disable=SC2046
  sysbench "$TIMED" $(sb "$sys") --threads="$THREADS" --time="$TIME" run > "$log" 2>&1 || {
    echo "$sys round $round: run failed"; grep -m3 -E 'FATAL|error' "$log" || tail -3 "$log"; failed=1; }
  if [ "$CHECK" = 1 ] && { [ "$sys" = lockstep ] || [ "$CHECK_MARIADB" = 1 ]; }; then
    chk=$(check "$sys" "$OUT/$sys-$round-check.log")
  fi
  awk -v r="$round" -v s="$sys" -v l="$load1" -v chk="$chk" -v types="$OUT/types.csv" '
    function pct(name, p,   want, seen, b, i, n) { # p-th percentile of a type, in ms (bucket top)
      want = p / 100 * ok[name]; seen = 0; n = 0; delete bs
      for (b in h) { split(b, k, SUBSEP); if (k[1] == name) bs[++n] = k[2] + 0 }
      for (i = 2; i <= n; i++) for (j = i; j > 1 && bs[j-1] > bs[j]; j--) { t = bs[j]; bs[j] = bs[j-1]; bs[j-1] = t }
      for (i = 1; i <= n; i++) { seen += h[name, bs[i]]; if (seen >= want) return exp((bs[i] + 1) * log(1.05)) / 1000 }
      return 0
    }
    /^SBTPCC_TYPE / {
      ok[$2] += $3; us[$2] += $4; fl[$2] += $5; rb[$2] += $7; fails += $5
      if ($8 != "-") { nb = split($8, pairs, ","); for (i = 1; i <= nb; i++) { split(pairs[i], kv, ":"); h[$2, kv[1]] += kv[2] } }
    }
    /^SBTPCC_ERR / { e = $2; errn[e] += $3; if (!(e in errq)) { q = $0; sub(/^SBTPCC_ERR [^ ]+ [^ ]+ /, "", q); errq[e] = q } }
    /^ +transactions:/ { tps = $3; gsub(/\(/, "", tps) }
    /^ +reconnects:/ { rec = $2 }
    /^ +total time:/ { secs = $3; sub(/s$/, "", secs) }
    /95th percentile:/ { p95 = $3 }
    END {
      split("new_order payment orderstatus delivery stocklevel", names, " ")
      tpmc = secs > 0 ? ok["new_order"] * 60 / secs : 0
      printf "%s round %s (load %s): %.1f txn/s, tpmC %.0f, p95 %s ms, failed attempts %d, reconnects %s, check %s\n", s, r, l, tps, tpmc, p95, fails, rec, chk
      line = sprintf("%s,%s,%s,%.1f,%.0f,%s,%d,%s", r, s, l, tps, tpmc, p95, fails, rec)
      for (i = 1; i <= 5; i++) {
        n = names[i]; avg = ok[n] > 0 ? us[n] / ok[n] / 1000 : 0; p = pct(n, 95)
        printf "    %-12s %7d  avg %8.2f ms  p95 %8.2f ms  failed %d%s\n", n, ok[n], avg, p, fl[n], (n == "new_order" ? sprintf("  (rolled back by the script: %d)", rb[n]) : "")
        line = line sprintf(",%d,%.2f", ok[n], avg)
        printf "%s,%s,%s,%d,%.2f,%.2f,%d,%d\n", r, s, n, ok[n], avg, p, fl[n], rb[n] >> types
      }
      for (e in errn) printf "    error %s x%d, e.g.: %s\n", e, errn[e], errq[e]
      print line "," chk > "/dev/stderr"
    }' "$log" 2>> "$OUT/runs.csv"
  case "$chk" in -|PASS) ;; *) echo "    consistency check: $chk (see $OUT/$sys-$round-check.log)"; grep FAILED "$OUT/$sys-$round-check.log" | head -5 || true ;; esac
}

for round in $(seq 1 "$ROUNDS"); do
  if [ $((round % 2)) = 1 ]; then run "$round" lockstep; run "$round" mariadb
  else run "$round" mariadb; run "$round" lockstep; fi
done
ps -o rss= -p "$LS_PID" | awk '{printf "lockstep RSS: %.0f MiB\n", $1/1024}'
ps -o rss= -p "$MDB_PID" | awk '{printf "mariadbd RSS: %.0f MiB\n", $1/1024}'

# --- summary -------------------------------------------------------------------
echo
echo "sysbench-tpcc: $SCALE warehouses, $THREADS threads, ${TIME}s runs after ${WARMUP}s warm-up, $ROUNDS rounds; load average now: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -F, "$MEDIAN_AWK"'
  NR == 1 { next }
  { n[$2]++; k = n[$2]
    tpmc[$2, k] = $5; tps[$2, k] = $4; p95[$2, k] = $6
    for (i = 0; i < 5; i++) lat[$2, i, k] = $(10 + 2 * i)
    if ($19 != "-" && $19 != "PASS") bad = bad " " $2 "/" $1 "=" $19 }
  function med(sys, what, i,   a, j) {
    for (j = 1; j <= n[sys]; j++) a[j] = (what == "tpmc" ? tpmc[sys, j] : what == "tps" ? tps[sys, j] : what == "p95" ? p95[sys, j] : lat[sys, i, j])
    return median(a, n[sys])
  }
  END {
    split("New-Order Payment Order-Status Delivery Stock-Level", names, " ")
    lt = med("lockstep", "tpmc"); mt = med("mariadb", "tpmc")
    printf "median tpmC: lockstep %.0f, MariaDB %.0f: %.2fx (goal >= 1.5x)\n", lt, mt, (mt > 0 ? lt / mt : 0)
    printf "median txn/s: lockstep %.1f, MariaDB %.1f; median p95: %.2f ms vs %.2f ms\n", med("lockstep", "tps"), med("mariadb", "tps"), med("lockstep", "p95"), med("mariadb", "p95")
    allle = 1
    for (i = 0; i < 5; i++) {
      l = med("lockstep", "lat", i); m = med("mariadb", "lat", i); if (l > m) allle = 0
      printf "  %-12s average latency: lockstep %8.2f ms, MariaDB %8.2f ms (%.2fx)\n", names[i + 1], l, m, (m > 0 ? l / m : 0)
    }
    printf "every type at or below MariaDB'"'"'s average latency: %s\n", allle ? "yes" : "no"
    printf "consistency checks: %s\n", (bad == "" ? "all PASS (where run)" : "not all PASS:" bad)
  }' "$OUT/runs.csv"
exit "$failed"
