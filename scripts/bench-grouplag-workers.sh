#!/usr/bin/env bash
# Secondary apply lag at the primary's peak, serial applier vs parallel
# applier on the secondaries (docs/benchmarks/notes.md, "Group replication",
# "Serial vs parallel applier on the secondaries"). Starts two 3-member
# lockstep groups on 127.0.0.1 from one binary, alike but for
# --replica-parallel-workers (group A: $WORKERS_A, group B: $WORKERS_B),
# prepares sysbench's tables on each, then for ROUNDS rounds runs
# oltp_write_only at THREADS threads for BENCH_TIME s against each group's
# primary in turn (A B, then B A, ...), with scripts/grouplag sampling both
# secondaries every 100 ms. Only the group under load is busy; before each
# run the script waits until every member of both groups has applied the
# same index.
#
#   scripts/bench-grouplag-workers.sh
#   ROUNDS=5 BENCH_TIME=30 WORKERS_B=8 scripts/bench-grouplag-workers.sh
#
# Results: $OUT/lag-<group>-r<round>.txt, $OUT/runs.csv and a summary.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-64}
BENCH_TIME=${BENCH_TIME:-20}
BENCH_WARMUP=${BENCH_WARMUP:-3}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-20000}
WORKERS_A=${WORKERS_A:-1}
WORKERS_B=${WORKERS_B:-4}
OUT=${OUT:-/tmp/lockstep-grouplag-workers}
PORT_BASE=${PORT_BASE:-3690}  # group A: +1..3, group B: +11..13
GPORT_BASE=${GPORT_BASE:-3790}

rm -rf "$OUT"; mkdir -p "$OUT"
if [ -n "${LS_BINARY:-}" ]; then cp "$LS_BINARY" "$OUT/lockstep"; else go build -o "$OUT/lockstep" ./cmd/lockstep; fi
go build -o "$OUT/grouplag" ./scripts/grouplag

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

# port GROUP ID: the SQL port of member ID of group A (offset 0) or B (10).
off() { [ "$1" = A ] && echo 0 || echo 10; }
port() { echo $((PORT_BASE + $(off "$1") + $2)); }
start_group() {
  local g=$1 workers=$2 seeds="" i
  for i in 1 2 3; do seeds="$seeds${seeds:+,}$i=127.0.0.1:$((GPORT_BASE + $(off "$g") + i))"; done
  for i in 1 2 3; do
    "$OUT/lockstep" serve --datadir "$OUT/$g$i" --port "$(port "$g" "$i")" --server-id "$i" \
      --group-local-address "127.0.0.1:$((GPORT_BASE + $(off "$g") + i))" --group-seeds "$seeds" \
      --group-bootstrap --replica-parallel-workers "$workers" >>"$OUT/$g$i.log" 2>&1 &
    PIDS+=($!)
  done
}
gstatus() { { mysql -h127.0.0.1 -P"$(port "$1" "$2")" -uroot -N -B -e "SHOW GLOBAL STATUS LIKE '$3'" 2>/dev/null || true; } | cut -f2; }
primary() {
  local i
  for _ in $(seq 1 600); do
    for i in 1 2 3; do [ "$(gstatus "$1" "$i" Lockstep_group_replication_primary)" = 1 ] && { echo "$i"; return; }; done
    sleep 0.1
  done
  echo "group $1: no primary" >&2; exit 1
}
converged() {
  local a1 a2 a3
  for _ in $(seq 1 3000); do
    a1=$(gstatus "$1" 1 Lockstep_group_replication_applied_index)
    a2=$(gstatus "$1" 2 Lockstep_group_replication_applied_index)
    a3=$(gstatus "$1" 3 Lockstep_group_replication_applied_index)
    [ -n "$a1" ] && [ "$a1" = "$a2" ] && [ "$a2" = "$a3" ] && return
    sleep 0.1
  done
  echo "group $1 did not converge" >&2; exit 1
}
sb() {
  local g=$1; shift
  sysbench oltp_write_only --mysql-host=127.0.0.1 --mysql-port="$(port "$g" "$(primary "$g")")" --mysql-user=root \
    --mysql-password= --mysql-db=sbtest --tables="$TABLES" --table-size="$TABLE_SIZE" "$@"
}

start_group A "$WORKERS_A"
start_group B "$WORKERS_B"
for g in A B; do
  p=$(primary "$g")
  mysql -h127.0.0.1 -P"$(port "$g" "$p")" -uroot -e 'CREATE DATABASE sbtest'
  sb "$g" --threads=4 prepare >"$OUT/prepare-$g.log" 2>&1
done

echo "round,group,workers,tps,load1" >"$OUT/runs.csv"
for r in $(seq 1 "$ROUNDS"); do
  order="A B"; [ $((r % 2)) = 0 ] && order="B A"
  for g in $order; do
    converged A; converged B
    w=$WORKERS_A; [ "$g" = B ] && w=$WORKERS_B
    sb "$g" --threads="$THREADS" --time="$BENCH_WARMUP" run >/dev/null 2>&1 || true
    converged "$g"
    p=$(primary "$g") reps=""
    for i in 1 2 3; do [ "$i" = "$p" ] || reps="$reps -replica root@tcp(127.0.0.1:$(port "$g" "$i"))/"; done
    load=$(cut -d' ' -f1 /proc/loadavg)
    # shellcheck disable=SC2086
    "$OUT/grouplag" -kind lockstep -load "${BENCH_TIME}s" -csv "$OUT/lag-$g-r$r.csv" \
      -primary "root@tcp(127.0.0.1:$(port "$g" "$p"))/" $reps >"$OUT/lag-$g-r$r.txt" 2>&1 &
    lagpid=$!
    sb "$g" --threads="$THREADS" --time="$BENCH_TIME" run >"$OUT/sb-$g-r$r.log" 2>&1 || true
    wait "$lagpid" || echo "(grouplag failed: $OUT/lag-$g-r$r.txt)"
    tps=$(awk '/transactions:/ {gsub(/[()]/,"",$3); print $3 + 0}' "$OUT/sb-$g-r$r.log")
    echo "$r,$g,$w,$tps,$load" >>"$OUT/runs.csv"
    echo "== round $r, group $g (--replica-parallel-workers $w), $tps tps, load $load"
    cat "$OUT/lag-$g-r$r.txt"
    for i in 1 2 3; do
      [ "$i" = "$p" ] && continue
      echo "  member $i: applier workers $(gstatus "$g" "$i" Lockstep_applier_workers), peak busy $(gstatus "$g" "$i" Lockstep_applier_busy_workers_peak), dependency waits $(gstatus "$g" "$i" Lockstep_applier_dependency_waits), commit-order waits $(gstatus "$g" "$i" Lockstep_applier_commit_order_waits)"
    done
  done
done
