#!/usr/bin/env bash
# MySQL's sync delay on one durable server (issue 7): the same lockstep
# process runs oltp_write_only at THREADS with each SETTINGS entry in turn
# ("DELAY_US/NO_DELAY_COUNT", set with SET GLOBAL before its run), and a
# second server with --sync-binlog=0 takes its turn in every round as the
# reference. ROUNDS rounds, the order rotated each round. Per run: TPS, p95,
# commits per fsync, how busy the machine was (/proc/stat).
#
#   scripts/bench-sync-delay.sh                                   # ~12 min
#   SETTINGS="0/0 200/0 300/6" THREADS=64 ROUNDS=3 scripts/bench-sync-delay.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-turns-lib.sh
THREADS=${THREADS:-16}; ROUNDS=${ROUNDS:-4}; TIME=${TIME:-20}
SETTINGS=${SETTINGS:-"0/0 100/0 200/0 300/6 500/8"}
OUT=${OUT:-/tmp/lockstep-sync-delay}; P1=${P1:-3594}; P0=${P0:-3595}
rm -rf "$OUT"; mkdir -p "$OUT"
if [ -n "${LS_BINARY:-}" ]; then cp "$LS_BINARY" "$OUT/lockstep"; else go build -o "$OUT/lockstep" ./cmd/lockstep; fi
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
status() { mysql -h127.0.0.1 -P"$1" -uroot -N -e "SHOW GLOBAL STATUS LIKE '$2'" | cut -f2; }
sb() { echo "--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$1 --mysql-user=root --mysql-db=sbtest --tables=4 --table-size=100000"; }

prepare_sbtest "$OUT/lockstep" "$OUT/data1" "$P1" "$OUT/prepare.log"
cp -a "$OUT/data1" "$OUT/data0"
"$OUT/lockstep" serve --port "$P1" --datadir "$OUT/data1" >"$OUT/sync1.log" 2>&1 &
PIDS+=($!); PID1=$!
"$OUT/lockstep" serve --port "$P0" --datadir "$OUT/data0" --sync-binlog=0 >"$OUT/sync0.log" 2>&1 &
PIDS+=($!); PID0=$!
ready "$P1"; ready "$P0"

# run NAME PORT: one TIME-second run; prints one result line
run() {
  local name=$1 port=$2 b0 t0 b1 t1 c0 c1 f0 f1 out u n s i w x y z
  quiet "$PID1" "$PID0"
  read -r _ u n s i w x y z _ </proc/stat; b0=$((u + n + s + x + y + z)); t0=$((b0 + i + w))
  c0=$(status "$port" Lockstep_commits); f0=$(status "$port" Lockstep_log_fsyncs)
  # shellcheck disable=SC2046
  out=$(sysbench oltp_write_only $(sb "$port") --threads="$THREADS" --time="$TIME" --percentile=95 run)
  read -r _ u n s i w x y z _ </proc/stat; b1=$((u + n + s + x + y + z)); t1=$((b1 + i + w))
  c1=$(status "$port" Lockstep_commits); f1=$(status "$port" Lockstep_log_fsyncs)
  echo "$out" | awk -v name="$name" -v busy=$(((b1 - b0) * 100 / (t1 - t0))) -v c=$((c1 - c0)) -v f=$((f1 - f0)) '
    /transactions:/ {gsub(/[()]/, "", $3); tps = $3}
    /95th percentile:/ {p95 = $3}
    END {printf "%-8s TPS %8.1f  p95 %6.2f ms  commits/fsync %5.2f  machine busy %3d%%\n",
      name, tps, p95, (f > 0 ? c / f : 0), busy}'
}
# cell SETTING: the durable server with that delay, or "sync0"
cell() {
  if [ "$1" = sync0 ]; then run sync0 "$P0"; return; fi
  mysql -h127.0.0.1 -P"$P1" -uroot -e "SET GLOBAL binlog_group_commit_sync_delay=${1%/*}; SET GLOBAL binlog_group_commit_sync_no_delay_count=${1#*/}"
  run "$1" "$P1"
}

echo "$(date -u '+%F %T') UTC, $(uptime); $THREADS threads, $ROUNDS rounds of $TIME s" | tee "$OUT/results.txt"
# shellcheck disable=SC2206
cells=($SETTINGS sync0)
cell "${cells[0]}" >/dev/null; cell sync0 >/dev/null # warm-up
for r in $(seq 1 "$ROUNDS"); do
  k=$(( (r - 1) % ${#cells[@]} ))
  for j in $(seq 0 $((${#cells[@]} - 1))); do cell "${cells[$(( (j + k) % ${#cells[@]} ))]}"; done
done | tee -a "$OUT/results.txt"
awk '{tps[$1] += $3; cf[$1] += $8; n[$1]++}
  END {for (s in n) printf "mean %-8s TPS %8.1f  commits/fsync %5.2f  (%d runs)\n", s, tps[s] / n[s], cf[s] / n[s], n[s]}' \
  <(grep ' TPS ' "$OUT/results.txt") | sort | tee -a "$OUT/results.txt"
