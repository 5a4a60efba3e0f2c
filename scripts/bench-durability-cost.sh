#!/usr/bin/env bash
# Where the cost of durability goes (issue 7): the same lockstep binary with
# sync_binlog=1 and with --sync-binlog=0, side by side on copies of one data
# directory (4 tables x 100,000 rows), taking turns for ROUNDS rounds of
# oltp_write_only at THREADS. Per run: TPS, p95, how busy the machine was
# (/proc/stat), the server's CPU per transaction (/proc/PID/stat) and its
# fsyncs per second; with PROFILE=1 a 20 s CPU profile of each server's
# last run ($OUT/sync1.pprof, $OUT/sync0.pprof) for `go tool pprof`.
#
#   scripts/bench-durability-cost.sh                 # 16 threads, 3 rounds of 20 s: ~5 min
#   THREADS=64 ROUNDS=2 PROFILE=1 scripts/bench-durability-cost.sh
#   MARIADB=1 scripts/bench-durability-cost.sh       # MariaDB 10.11 too: 1/1 (binlog, sync_binlog=1,
#                                                    # innodb_flush_log_at_trx_commit=1) and 0/2 (sync_binlog=0, =2)
#   B_FLAGS=--log-syncs-in-flight=2 scripts/bench-durability-cost.sh
#                                                    # a third, durable server ("syncb") with these flags
#                                                    # (and B_BINARY, if set), taking turns with the other two
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-turns-lib.sh
THREADS=${THREADS:-16}; ROUNDS=${ROUNDS:-3}; TIME=${TIME:-20}; PROFILE=${PROFILE:-0}
OUT=${OUT:-/tmp/lockstep-durability-cost}; P1=${P1:-3494}; P0=${P0:-3495}
rm -rf "$OUT"; mkdir -p "$OUT"
if [ -n "${LS_BINARY:-}" ]; then cp "$LS_BINARY" "$OUT/lockstep"; else go build -o "$OUT/lockstep" ./cmd/lockstep; fi
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
status() { mysql -h127.0.0.1 -P"$1" "${@:3}" -N -e "SHOW GLOBAL STATUS LIKE '$2'" | cut -f2; }
mdb() { [ "$1" = "$((P1 + 2))" ] || [ "$1" = "$((P0 + 2))" ]; }
# sb PORT: sysbench's options for the server on PORT (MariaDB's with its account)
sb() {
  local user=--mysql-user=root
  if mdb "$1"; then user="--mysql-user=sbtest --mysql-password=sbtest"; fi
  echo "--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$1 $user --mysql-db=sbtest --tables=4 --table-size=100000"
}
# fsyncs PORT: the server's fsyncs so far (MariaDB: of files, Innodb_data_fsyncs + binlog group commits)
fsyncs() {
  if mdb "$1"; then
    echo $(( $(status "$1" Innodb_data_fsyncs -usbtest -psbtest) + $(status "$1" Binlog_group_commits -usbtest -psbtest) ))
  else status "$1" Lockstep_log_fsyncs -uroot; fi
}

# One data directory, prepared once, then copied.
prepare_sbtest "$OUT/lockstep" "$OUT/data1" "$P1" "$OUT/prepare.log"
cp -a "$OUT/data1" "$OUT/data0"
PB=$((P1 + 4)); PIDB=
if [ -n "${B_FLAGS:-}${B_BINARY:-}" ]; then
  cp -a "$OUT/data1" "$OUT/datab"
  cp "${B_BINARY:-$OUT/lockstep}" "$OUT/lockstep-b"
  # shellcheck disable=SC2086
  LOCKSTEP_PPROF=127.0.0.1:6072 "$OUT/lockstep-b" serve --port "$PB" --datadir "$OUT/datab" ${B_FLAGS:-} >"$OUT/syncb.log" 2>&1 &
  PIDS+=($!); PIDB=$!
  ready "$PB"
fi

LOCKSTEP_PPROF=127.0.0.1:6071 "$OUT/lockstep" serve --port "$P1" --datadir "$OUT/data1" >"$OUT/sync1.log" 2>&1 &
PIDS+=($!); PID1=$!
LOCKSTEP_PPROF=127.0.0.1:6070 "$OUT/lockstep" serve --port "$P0" --datadir "$OUT/data0" --sync-binlog=0 >"$OUT/sync0.log" 2>&1 &
PIDS+=($!); PID0=$!
ready "$P1"; ready "$P0"
M1=$((P1 + 2)); M0=$((P0 + 2)); MPID1=; MPID0=
if [ "${MARIADB:-0}" = 1 ]; then
  export PATH="$PATH:/usr/sbin:/sbin"
  . scripts/mariadb-lib.sh
  for m in 1 0; do
    port=$M1; [ "$m" = 0 ] && port=$M0
    start_mariadb "$OUT/mdb$m" "$port" 1 sbtest sbtest
    if [ "$m" = 0 ]; then # no durability: the log written at commit, fsynced about once a second
      mariadb -S "$OUT/mdb$m/mdb.sock" -uroot -e 'SET GLOBAL sync_binlog=0; SET GLOBAL innodb_flush_log_at_trx_commit=2'
    fi
    mariadb -S "$OUT/mdb$m/mdb.sock" -uroot -e 'CREATE DATABASE sbtest'
    # shellcheck disable=SC2046
    sysbench oltp_write_only $(sb "$port") --threads=4 prepare >/dev/null
    PIDS+=("$(cat "$OUT/mdb$m/mdb.pid")")
  done
  MPID1=$(cat "$OUT/mdb1/mdb.pid"); MPID0=$(cat "$OUT/mdb0/mdb.pid")
fi

# run NAME PORT PID PPROF: one TIME-second run; prints one result line
run() {
  local name=$1 port=$2 pid=$3 pprof=$4 b0 t0 b1 t1 c0 c1 f0 f1 out prof= u n s i w x y z
  # shellcheck disable=SC2086
  quiet "$PID1" "$PID0" $PIDB $MPID1 $MPID0
  read -r _ u n s i w x y z _ </proc/stat; b0=$((u + n + s + x + y + z)); t0=$((b0 + i + w))
  c0=$(cpu_ticks "$pid"); f0=$(fsyncs "$port")
  if [ "$PROFILE" = 1 ] && [ "$TIME" -gt 22 ] && [ "$pprof" != - ]; then
    (sleep 2; curl -s -o "$OUT/$name.pprof" "http://$pprof/debug/pprof/profile?seconds=20") & prof=$!
  fi
  # shellcheck disable=SC2046
  out=$(sysbench oltp_write_only $(sb "$port") --threads="$THREADS" --time="$TIME" --percentile=95 run)
  [ -n "$prof" ] && wait "$prof"
  read -r _ u n s i w x y z _ </proc/stat; b1=$((u + n + s + x + y + z)); t1=$((b1 + i + w))
  c1=$(cpu_ticks "$pid"); f1=$(fsyncs "$port")
  echo "$out" | awk -v name="$name" -v busy=$(((b1 - b0) * 100 / (t1 - t0))) -v cpu=$((c1 - c0)) -v tick="$tick" \
    -v fs=$((f1 - f0)) -v t="$TIME" '
    /transactions:/ {n = $2; gsub(/[()]/, "", $3); tps = $3}
    /95th percentile:/ {p95 = $3}
    END {printf "%-6s TPS %8.1f  p95 %6.2f ms  machine busy %3d%%  server CPU %.3f ms/txn  fsyncs %5.0f/s\n",
      name, tps, p95, busy, cpu * 1000 / tick / n, fs / t}'
}

echo "$(date -u '+%F %T') UTC, $(uptime); $THREADS threads, $ROUNDS rounds of $TIME s" | tee "$OUT/results.txt"
run sync1 "$P1" "$PID1" 127.0.0.1:6071 >/dev/null; run sync0 "$P0" "$PID0" 127.0.0.1:6070 >/dev/null # warm-up
if [ -n "$PIDB" ]; then run syncb "$PB" "$PIDB" 127.0.0.1:6072 >/dev/null; fi
if [ -n "$MPID1" ]; then run mdb1 "$M1" "$MPID1" - >/dev/null; run mdb0 "$M0" "$MPID0" - >/dev/null; fi
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then order="1 0"; else order="0 1"; fi
  if [ -n "$PIDB" ]; then # three servers: each position in turn
    case $((r % 3)) in 1) order="1 b 0" ;; 2) order="b 0 1" ;; 0) order="0 1 b" ;; esac
  fi
  for s in $order; do
    if [ "$s" = b ]; then run syncb "$PB" "$PIDB" 127.0.0.1:6072; continue; fi
    if [ "$s" = 1 ]; then run sync1 "$P1" "$PID1" 127.0.0.1:6071; else run sync0 "$P0" "$PID0" 127.0.0.1:6070; fi
    if [ -n "$MPID1" ]; then
      if [ "$s" = 1 ]; then run mdb1 "$M1" "$MPID1" -; else run mdb0 "$M0" "$MPID0" -; fi
    fi
  done
done | tee -a "$OUT/results.txt"
