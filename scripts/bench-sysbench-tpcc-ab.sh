#!/usr/bin/env bash
# Two lockstep binaries under Percona-Lab's sysbench-tpcc, same data, same
# run, ABBA (issue 35): per cell a copy of one loaded data directory, the
# binary started on it (recovery), WARMUP s unmeasured, TIME s measured;
# prints each cell's transactions per second, p95 and the server's CPU per
# transaction (/proc/PID/stat over the measured run), then per side the
# medians and the per-round new/old ratios. CPU per transaction moves less
# than throughput on a shared machine.
#
#   OLD=/tmp/ls-old NEW=/tmp/ls-new ROUNDS=2 TIME=60 scripts/bench-sysbench-tpcc-ab.sh
#
#   OLD, NEW (binaries; required)  ROUNDS (2)  TIME (60)  WARMUP (10)
#   THREADS (16)  SCALE (4)  OUT (/tmp/bench-sbtpcc-ab)  PORT (3581)
#   SYSBENCH_TPCC_DIR (/tmp/sysbench-tpcc: a clone of
#   https://github.com/Percona-Lab/sysbench-tpcc)
set -euo pipefail
cd "$(dirname "$0")/.."
: "${OLD:?OLD=binary}" "${NEW:?NEW=binary}"
ROUNDS=${ROUNDS:-2}; TIME=${TIME:-60}; WARMUP=${WARMUP:-10}; THREADS=${THREADS:-16}
SCALE=${SCALE:-4}; OUT=${OUT:-/tmp/bench-sbtpcc-ab}; PORT=${PORT:-3581}
export SYSBENCH_TPCC_DIR=${SYSBENCH_TPCC_DIR:-/tmp/sysbench-tpcc}
[ -f "$SYSBENCH_TPCC_DIR/tpcc.lua" ] || { echo "no sysbench-tpcc in $SYSBENCH_TPCC_DIR" >&2; exit 1; }
TIMED=$PWD/scripts/sysbench-tpcc-timed.lua
SB="--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --mysql-db=sbt --tables=1 --scale=$SCALE --use_fk=0 --trx_level=RR"
rm -rf "$OUT"; mkdir -p "$OUT"
. scripts/bench-lib.sh # start_lsm, wait_ready, LS_PID
start() { LSM=$1; start_lsm "$2.log" --datadir "$2"; wait_ready; }
stop() { kill "$LS_PID"; wait "$LS_PID" 2>/dev/null || true; LS_PID=; }

echo "== loading $SCALE warehouses with $OLD"
start "$OLD" "$OUT/base"
mysql -h127.0.0.1 -P"$PORT" -uroot -e 'CREATE DATABASE sbt'
# shellcheck disable=SC2086
sysbench "$TIMED" $SB --threads=4 prepare > "$OUT/prepare.log" 2>&1
stop

cell() { # round side binary
  local d=$OUT/d-$1-$2 c0 c1
  rm -rf "$d"; cp -a "$OUT/base" "$d"
  start "$3" "$d"
  # shellcheck disable=SC2086
  sysbench "$TIMED" $SB --threads="$THREADS" --time="$WARMUP" run > /dev/null 2>&1
  c0=$(awk '{print $14 + $15}' /proc/$LS_PID/stat)
  # shellcheck disable=SC2086
  sysbench "$TIMED" $SB --threads="$THREADS" --time="$TIME" --percentile=95 run > "$d.run" 2>&1
  c1=$(awk '{print $14 + $15}' /proc/$LS_PID/stat)
  stop
  awk -v r="$1" -v s="$2" -v d=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" '
    /transactions:/ {n = $2; gsub(/[()]/, "", $3); tps = $3}
    /95th percentile:/ {p95 = $3}
    END {printf "round=%s side=%s tps=%s p95=%s cpu_us_per_txn=%.1f\n", r, s, tps, p95, d * 1e6 / hz / n}' "$d.run" | tee -a "$OUT/cells.txt"
  rm -rf "$d"
}
for r in $(seq "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then order="old new"; else order="new old"; fi
  for s in $order; do
    if [ "$s" = old ]; then cell "$r" old "$OLD"; else cell "$r" new "$NEW"; fi
  done
done
awk '
  function med(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }; return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }
  { for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
    tps[f["round"], f["side"]] = f["tps"]; cpu[f["round"], f["side"]] = f["cpu_us_per_txn"]; if (f["round"] > R) R = f["round"] }
  END {
    for (r = 1; r <= R; r++) { rt[r] = tps[r, "new"] / tps[r, "old"]; rc[r] = cpu[r, "new"] / cpu[r, "old"]; ot[r] = tps[r, "old"]; nt[r] = tps[r, "new"]; oc[r] = cpu[r, "old"]; nc[r] = cpu[r, "new"]
      printf "round %d: tps new/old %.3f, server CPU/txn new/old %.3f\n", r, rt[r], rc[r] }
    printf "median: tps old %.1f new %.1f, ratio %.3f; CPU/txn old %.0f new %.0f us, ratio %.3f\n", med(ot, R), med(nt, R), med(rt, R), med(oc, R), med(nc, R), med(rc, R)
  }' "$OUT/cells.txt" | tee "$OUT/summary.txt"
