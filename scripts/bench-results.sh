#!/usr/bin/env bash
# Regenerates docs/BENCHMARKS.md's "Where lockstep stands" table and plots:
# lockstep (built from this checkout, durable defaults) against MariaDB 10.11
# (Debian's mariadb-server, innodb_flush_log_at_trx_commit=1, log-bin,
# sync_binlog=1), both started by `lockstep bench compare` on this machine,
# sysbench's five oltp workloads and TPC-C (4 warehouses) at 16 and 64
# threads, 2 ABBA rounds of 20 s after 5 s warm-up: about 30 minutes on the
# 2-vCPU machine kind (loads included).
#
# The oltp cells run with the reference client, Debian's sysbench 1.0.20
# (`--client sysbench`; installed with apt-get when missing and root).
# CLIENT=lockstep runs them with lockstep bench oltp's built-in Go client
# instead (which counts fewer transactions than sysbench on the same server:
# docs/bench.md, "Agreement with sysbench"). TPC-C always runs lockstep
# bench tpcc's driver.
#
#   scripts/bench-results.sh                      # writes docs/img/compare/
#   OUT=/tmp/cmp scripts/bench-results.sh --rounds 3 --time 30s   # extra flags go to bench compare
#   CLIENT=lockstep OUT=/tmp/cmp-builtin scripts/bench-results.sh
#
# Output: $OUT/results.md (the table, and which client ran it), runs.csv,
# series.csv and the PNGs that docs/BENCHMARKS.md shows. Copy the table's
# figures into docs/BENCHMARKS.md with the date, commit and client.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-docs/img/compare}
CLIENT=${CLIENT:-sysbench}
if [ "$CLIENT" = sysbench ] && ! command -v sysbench >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sysbench >/dev/null
  else
    echo "sysbench is not installed: apt-get install -y sysbench (or CLIENT=lockstep for the built-in client)" >&2
    exit 1
  fi
fi
BIN=$(mktemp -d)/lockstep
go build -o "$BIN" ./cmd/lockstep
"$BIN" bench compare --client "$CLIENT" \
  --target mariadb=mariadb --target lockstep="lockstep:$BIN" \
  --workloads point_select,read_only,write_only,read_write,insert --tpcc-warehouses 4 \
  --threads 16,64 --time 20s --warmup 5s --rounds 2 --timeline write_only/64 \
  --out "$OUT" "$@"
rm -f "$BIN"
