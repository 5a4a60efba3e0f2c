#!/usr/bin/env bash
# sysbench-tpcc's `SELECT count(c_id) FROM customer WHERE c_w_id = ? AND
# c_d_id = ? AND c_last = ?` (scripts/count-by-name.lua, text queries) on
# lockstep binaries taking turns over the same TPC-C database.
#
#   VARIANTS="before=/tmp/ls-old after=/tmp/ls-new after-nofast=/tmp/ls-new:lockstep_fast_path=OFF" \
#     REPS=3 scripts/bench-count-by-name.sh
#
# A variant is NAME=BINARY[:VARIABLE=VALUE], the setting made with SET GLOBAL
# once the server is up.
# Every run starts a variant's binary on a fresh data directory, loads
# WAREHOUSES warehouses at full scale (3,000 customers per district) with
# `lockstep bench tpcc --load --seed 1` (the same rows each time), and runs
# the statement from THREADS sysbench threads for DURATION seconds. (Not a
# copy of one loaded directory: on 2026-11-27 a server recovered from a log
# holding DDL left the replayed statements' metadata locks held, and every
# later statement on those tables waited.) Printed per run: statements per
# second, average and 95th percentile latency; then the medians per variant
# and each variant's median rate over the first's.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-turns-lib.sh

VARIANTS=${VARIANTS:?set VARIANTS="name=binary ..."}
REPS=${REPS:-3}
WAREHOUSES=${WAREHOUSES:-1}
THREADS=${THREADS:-1}
DURATION=${DURATION:-15}
PORT=${PORT:-3440}
OUT=${OUT:-/tmp/lockstep-count-by-name}
first_bin=$(echo "$VARIANTS" | awk '{split($1, a, "="); split(a[2], b, ":"); print b[1]}')

mkdir -p "$OUT"
: > "$OUT/results.txt"
run() { # name binary [variable=value]
  local name=$1 bin=$2 set=${3:-}
  rm -rf "$OUT/data" "$OUT/data-files"
  "$bin" serve --datadir "$OUT/data" --port "$PORT" > "$OUT/$name-server.log" 2>&1 &
  local pid=$!
  ready "$PORT"
  "$first_bin" bench tpcc --dsn "root@tcp(127.0.0.1:$PORT)/tpcc" --warehouses "$WAREHOUSES" --seed 1 \
    --threads 4 --load --duration 0 --check=false > "$OUT/$name-load.log" 2>&1
  [ -n "$set" ] && mysql -h127.0.0.1 -P"$PORT" -uroot -e "SET GLOBAL $set"
  quiet "$pid"
  sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$PORT" --mysql-user=root --mysql-db=tpcc \
    --threads="$THREADS" --time="$DURATION" --warehouses="$WAREHOUSES" --percentile=95 \
    scripts/count-by-name.lua run > "$OUT/$name-run.log" 2>&1 || true
  kill "$pid"; wait "$pid" 2>/dev/null || true
  awk -v n="$name" '
    /queries:/ {gsub(/[()]/, "", $3); q=$3}
    /avg:/ {a=$2} /95th percentile:/ {p=$3}
    END {printf "%-10s %9.1f statements/s  avg %8.3f ms  p95 %8.3f ms\n", n, q, a, p}' "$OUT/$name-run.log" | tee -a "$OUT/results.txt"
}

for rep in $(seq 1 "$REPS"); do
  for v in $VARIANTS; do
    spec=${v#*=}; set=
    [[ "$spec" == *:* ]] && set=${spec#*:}
    run "${v%%=*}" "${spec%%:*}" "$set"
  done
done

echo
awk "$MEDIAN_AWK"'
  {n=$1; k[n]++; q[n, k[n]]=$2; a[n, k[n]]=$5; if (!(n in seen)) {seen[n]=1; order[++m]=n}}
  END {
    for (i = 1; i <= m; i++) {
      n = order[i]
      for (j = 1; j <= k[n]; j++) { qq[j] = q[n, j]; aa[j] = a[n, j] }
      mq[n] = median(qq, k[n]); ma[n] = median(aa, k[n])
      printf "%-10s median %9.1f statements/s  avg %8.3f ms  (%d runs)  %s\n", n, mq[n], ma[n], k[n],
        (i > 1 ? sprintf("%.1fx the rate of %s", mq[n] / mq[order[1]], order[1]) : "")
    }
  }' "$OUT/results.txt"
