#!/usr/bin/env bash
# `lockstep bench oltp` against sysbench 1.0.20 on the same lockstep server:
# do the two clients measure the same thing? One server, one prepare (by
# lockstep bench oltp), then ROUNDS rounds; in each, for each workload, one
# run of each client, the order alternating ABBA (sysbench first in odd
# rounds). Prints every run's TPS and p95 and, per workload, the medians,
# the per-round ratios (lockstep bench oltp / sysbench) and their spread.
#
#   scripts/bench-oltp-vs-sysbench.sh                   # point_select, read_write at 16 threads, 3 rounds x 30 s
#   ROUNDS=5 TIME=20 THREADS=8 WORKLOADS="read_only" scripts/bench-oltp-vs-sysbench.sh
#   LS_BINARY=/tmp/lockstep scripts/bench-oltp-vs-sysbench.sh
#
# Both clients run without warm-up (sysbench 1.0.20 has no --warmup-time);
# one unmeasured 5 s sysbench read_write run warms the server first.
# sysbench's p95 comes from its own histogram (buckets about 1.5% apart),
# lockstep bench oltp's from an HDR histogram (0.1%). Results: $OUT/runs.csv.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
TIME=${TIME:-30}
THREADS=${THREADS:-16}
WORKLOADS=${WORKLOADS:-"point_select read_write"}
TABLES=${TABLES:-1}
TABLE_SIZE=${TABLE_SIZE:-10000}
PORT=${PORT:-3452}
OUT=${OUT:-/tmp/lockstep-oltp-vs-sysbench}

command -v sysbench >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sysbench >/dev/null; }
rm -rf "$OUT"; mkdir -p "$OUT"
if [ -n "${LS_BINARY:-}" ]; then cp "$LS_BINARY" "$OUT/lockstep"; else go build -o "$OUT/lockstep" ./cmd/lockstep; fi

"$OUT/lockstep" serve --datadir "$OUT/data" --port "$PORT" --bind-address 127.0.0.1 > "$OUT/server.log" 2>&1 &
LS_PID=$!
trap 'kill "$LS_PID" 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do mysql -h127.0.0.1 -P"$PORT" -uroot -e "SELECT 1" >/dev/null 2>&1 && break; sleep 0.5; done

DSN="root@tcp(127.0.0.1:$PORT)/sbtest"
SIZE="--tables=$TABLES --table-size=$TABLE_SIZE"
SB="--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --mysql-password= --mysql-db=sbtest $SIZE"
# shellcheck disable=SC2086
"$OUT/lockstep" bench oltp read_write prepare --dsn "$DSN" $SIZE --threads "$TABLES" > "$OUT/prepare.log" 2>&1
# shellcheck disable=SC2086
sysbench oltp_read_write $SB --threads="$THREADS" --time=5 run > "$OUT/warm.log" 2>&1

echo "round,workload,client,tps,p95_ms,errors" > "$OUT/runs.csv"
run() { # round workload client
  local r=$1 w=$2 c=$3 log="$OUT/$3-$2-$1.log"
  if [ "$c" = sysbench ]; then
    # shellcheck disable=SC2086
    sysbench "oltp_$w" $SB --threads="$THREADS" --time="$TIME" --report-interval=0 run > "$log" 2>&1
    awk -v r="$r" -v w="$w" '
      /transactions:/ {gsub(/\(/, "", $3); t=$3} /95th percentile:/ {p=$3} /ignored errors:/ {e=$3}
      END {printf "%s,%s,sysbench,%.2f,%.2f,%d\n", r, w, t, p, e}' "$log"
  else
    # shellcheck disable=SC2086
    "$OUT/lockstep" bench oltp "$w" --dsn "$DSN" $SIZE --threads "$THREADS" --time "$TIME" --report-interval 0 --output csv > "$log" 2>"$log.err"
    awk -F, -v r="$r" -v w="$w" 'NR == 2 {printf "%s,%s,bench-oltp,%.2f,%.2f,%d\n", r, w, $7, $12, $16 + $17}' "$log"
  fi | tee -a "$OUT/runs.csv"
}
for r in $(seq 1 "$ROUNDS"); do
  for w in $WORKLOADS; do
    if [ $((r % 2)) = 1 ]; then run "$r" "$w" sysbench; run "$r" "$w" bench-oltp
    else run "$r" "$w" bench-oltp; run "$r" "$w" sysbench; fi
  done
done

echo
echo "$THREADS threads, $TABLES table(s) of $TABLE_SIZE rows, $ROUNDS rounds of ${TIME}s per client and workload (errors: sysbench's ignored errors, bench oltp's retries + errors)"
awk -F, '
  function median(a, n,   i, j, t, b) { for (i = 1; i <= n; i++) b[i] = a[i]
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (b[j] < b[i]) { t = b[i]; b[i] = b[j]; b[j] = t }
    return n % 2 ? b[(n + 1) / 2] : (b[n / 2] + b[n / 2 + 1]) / 2 }
  NR > 1 { tps[$2, $3, $1] = $4; p95[$2, $3, $1] = $5; if ($1 > n) n = $1; if (!($2 in seen)) { seen[$2] = 1; order[++nw] = $2 } }
  END {
    for (k = 1; k <= nw; k++) {
      w = order[k]; lo = 1e9; hi = 0; plo = 1e9; phi = 0
      for (r = 1; r <= n; r++) {
        st[r] = tps[w, "sysbench", r]; bt[r] = tps[w, "bench-oltp", r]; sp[r] = p95[w, "sysbench", r]; bp[r] = p95[w, "bench-oltp", r]
        rt[r] = bt[r] / st[r]; rp[r] = (sp[r] > 0 ? bp[r] / sp[r] : 0)
        if (rt[r] < lo) lo = rt[r]; if (rt[r] > hi) hi = rt[r]; if (rp[r] < plo) plo = rp[r]; if (rp[r] > phi) phi = rp[r]
      }
      printf "%-13s TPS  sysbench %9.1f  bench oltp %9.1f  ratio %.3f (rounds %.3f..%.3f)\n", w, median(st, n), median(bt, n), median(rt, n), lo, hi
      printf "%-13s p95  sysbench %9.2f  bench oltp %9.2f  ratio %.3f (rounds %.3f..%.3f) ms\n", "", median(sp, n), median(bp, n), median(rp, n), plo, phi
    }
  }' "$OUT/runs.csv"
