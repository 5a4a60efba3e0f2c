#!/usr/bin/env bash
# A/B of lockstep binaries on TPC-C: the same loaded database, the binaries
# taking turns, server CPU per transaction beside tpmC.
#
#   VARIANTS="base=/tmp/ls-old cur=/tmp/ls-new" REPS=3 scripts/bench-tpcc-ab.sh
#   VARIANTS="on=/tmp/ls:--log-compression=ON off=/tmp/ls:--log-compression=OFF" scripts/bench-tpcc-ab.sh
#
# Each VARIANT is NAME=BINARY[:FLAG,FLAG...]. The first run loads
# TPCC_WAREHOUSES warehouses into $OUT/src with the first binary and stops
# it; every measured run starts the variant's binary on a fresh copy of that
# data directory (so it first replays the load's log), runs TPCC_THREADS
# terminals for TPCC_WARMUP + TPCC_DURATION (no consistency checks: they
# are bench-tpcc.sh's), and prints tpmC, the server's CPU seconds over the
# measured window (utime + stime from /proc) and CPU milliseconds per
# committed transaction. Server CPU per transaction moves less from run to
# run than tpmC on this machine; report both. Variants alternate within
# each repetition.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-turns-lib.sh

VARIANTS=${VARIANTS:?set VARIANTS="name=binary[:flags] ..."}
REPS=${REPS:-3}
TPCC_WAREHOUSES=${TPCC_WAREHOUSES:-4}
TPCC_SCALE_DOWN=${TPCC_SCALE_DOWN:-1} # >1: a smaller database, for trying the script
TPCC_THREADS=${TPCC_THREADS:-16}
TPCC_DURATION=${TPCC_DURATION:-50}
TPCC_WARMUP=${TPCC_WARMUP:-10}
PORT=${PORT:-3430}
OUT=${OUT:-/tmp/lockstep-tpcc-ab}
first_bin=$(echo "$VARIANTS" | awk '{split($1, a, "="); split(a[2], b, ":"); print b[1]}')

wait_up() { for _ in $(seq 1 240); do mysql -h127.0.0.1 -P"$PORT" -uroot -e "SELECT 1" >/dev/null 2>&1 && return; sleep 0.5; done; echo "server did not start" >&2; exit 1; }

mkdir -p "$OUT"
if [ ! -d "$OUT/src" ]; then
  "$first_bin" serve --datadir "$OUT/src" --port "$PORT" > "$OUT/load-server.log" 2>&1 &
  pid=$!
  wait_up
  "$first_bin" bench tpcc --dsn "root@tcp(127.0.0.1:$PORT)/tpcc" --warehouses "$TPCC_WAREHOUSES" \
    --scale-down "$TPCC_SCALE_DOWN" --threads 4 --load --duration 0 --check=false > "$OUT/load.log" 2>&1
  kill "$pid"; wait "$pid" 2>/dev/null || true
fi

run() { # name binary flags
  local name=$1 bin=$2 flags=$3
  rm -rf "$OUT/data"; cp -a "$OUT/src" "$OUT/data"
  # shellcheck disable=SC2086
  "$bin" serve --datadir "$OUT/data" --port "$PORT" ${flags//,/ } > "$OUT/$name-server.log" 2>&1 &
  local pid=$!
  wait_up
  "$first_bin" bench tpcc --dsn "root@tcp(127.0.0.1:$PORT)/tpcc" --warehouses "$TPCC_WAREHOUSES" \
    --scale-down "$TPCC_SCALE_DOWN" --threads "$TPCC_THREADS" --duration "${TPCC_DURATION}s" --warmup "${TPCC_WARMUP}s" --check=false \
    --report-interval 0 > "$OUT/$name-run.log" 2>&1 &
  local bp=$!
  sleep "$TPCC_WARMUP"
  local c0; c0=$(cpu_ticks "$pid")
  wait "$bp" || true
  local c1; c1=$(cpu_ticks "$pid")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  awk -v n="$name" -v c0="$c0" -v c1="$c1" -v tk="$tick" '
    /^tpmC / {t=$2} /^total / {tot=$2}
    END {cpu=(c1-c0)/tk; printf "%-10s tpmC %7.0f  server CPU %6.1f s  %.3f ms per transaction  (%d transactions)\n", n, t, cpu, cpu*1000/tot, tot}' "$OUT/$name-run.log"
}

for rep in $(seq 1 "$REPS"); do
  for v in $VARIANTS; do
    name=${v%%=*}; spec=${v#*=}
    bin=${spec%%:*}; flags=
    [[ "$spec" == *:* ]] && flags=${spec#*:}
    run "$name" "$bin" "$flags"
  done
done
