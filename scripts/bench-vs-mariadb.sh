#!/usr/bin/env bash
# Side-by-side sysbench matrix: lockstep and MariaDB 10.11 on this machine, in
# one run, the systems taking turns cell by cell (the machine has two cores).
#
#   scripts/bench-vs-mariadb.sh            # full matrix, 2 rounds (about 90 minutes)
#   BENCH_TIME=10 BENCH_THREADS="16" BENCH_WORKLOADS=oltp_point_select scripts/bench-vs-mariadb.sh
#   # durability: lockstep durable, lockstep sync_binlog=0, MariaDB with binlog + sync_binlog=1
#   LS_CONFIGS="lockstep: lockstep-sync0:--sync-binlog=0" MDB_BINLOG=1 \
#     BENCH_WORKLOADS="oltp_write_only oltp_insert" scripts/bench-vs-mariadb.sh
#
# A thin wrapper of `lockstep bench compare --client sysbench` (docs/bench.md).
# MariaDB (started by compare) runs alone (no replica), InnoDB with
# innodb_flush_log_at_trx_commit=1; with MDB_BINLOG=1 also the binary log (ROW
# format) with sync_binlog=1, which is lockstep's durability (one log, fsynced
# per commit group); MDB_BINLOG=0 (the default) adds skip-log-bin. LS_CONFIGS
# lists the lockstep configurations to run, space-separated NAME:ARGS with
# ARGS comma-separated serve flags (default "lockstep:", the defaults); an
# ARGS item @VAR=VALUE is run as SET GLOBAL VAR=VALUE once the server is up
# (e.g. "lockstep-nofast:@lockstep_fast_path=OFF"). Each is a target of its
# own on a fresh data directory, MariaDB first (the base of the ratios). All
# get BENCH_TABLES x BENCH_ROWS rows, prepared once. ROUNDS rounds (ABBA); in
# each, every workload at every thread count on every system back to back,
# each run BENCH_WARMUP s of unmeasured warm-up and BENCH_TIME s measured.
# CLIENT=lockstep runs the built-in client instead of sysbench. LS_PORT and
# MDB_PORT are no longer used (compare picks free ports).
# Results: $OUT/results.md (the table, ratios to MariaDB), runs.csv, series.csv,
# plots; the table is printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH_TIME=${BENCH_TIME:-30}
BENCH_WARMUP=${BENCH_WARMUP:-10}
BENCH_THREADS=${BENCH_THREADS:-"1 4 16 64"}
BENCH_WORKLOADS=${BENCH_WORKLOADS:-"oltp_point_select oltp_read_only oltp_read_write oltp_write_only"}
BENCH_TABLES=${BENCH_TABLES:-4}
BENCH_ROWS=${BENCH_ROWS:-100000}
ROUNDS=${ROUNDS:-2}
CLIENT=${CLIENT:-sysbench}
OUT=${OUT:-/tmp/lockstep-bench}
LS_CONFIGS=${LS_CONFIGS:-"lockstep:"}
MDB_BINLOG=${MDB_BINLOG:-0}

if [ "$CLIENT" = sysbench ] && ! command -v sysbench >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sysbench >/dev/null
fi
rm -rf "$OUT"; mkdir -p "$OUT"
go build -o "$OUT/lockstep" ./cmd/lockstep

mdb=mariadb=mariadb
[ "$MDB_BINLOG" = 1 ] || mdb=mariadb=mariadb:skip-log-bin
targets=(--target "$mdb")
for conf in $LS_CONFIGS; do
  name=${conf%%:*}; args=${conf#*:}
  spec="lockstep:$OUT/lockstep"
  [ -z "$args" ] || spec="$spec:${args//,/ }"
  targets+=(--target "$name=$spec")
done

status=0
"$OUT/lockstep" bench compare --client "$CLIENT" "${targets[@]}" \
  --workloads "$(echo $BENCH_WORKLOADS | tr ' ' ',')" --threads "$(echo $BENCH_THREADS | tr ' ' ',')" \
  --time "${BENCH_TIME}s" --warmup "${BENCH_WARMUP}s" --rounds "$ROUNDS" \
  --tables "$BENCH_TABLES" --table-size "$BENCH_ROWS" --out "$OUT" || status=$?
[ -f "$OUT/results.md" ] && sed -n '/^| workload/,/^$/p' "$OUT/results.md"
exit "$status"
