#!/usr/bin/env bash
# `lockstep bench oltp` against sysbench 1.0.20 on the same lockstep server:
# do the two clients measure the same thing? One server, one prepare (by
# lockstep bench oltp), then ROUNDS rounds; in each, for each workload, one
# run of each client, the order alternating ABBA (sysbench first in odd
# rounds). Prints every run's TPS, p95 and the client's own CPU time per
# transaction (user + system, /usr/bin/time) and, per workload, the medians,
# the per-round ratios (lockstep bench oltp / sysbench) and their spread,
# and sysbench's own spread (its slowest and fastest round over its median).
#
#   scripts/bench-oltp-vs-sysbench.sh                   # point_select, read_write at 16 threads, 3 rounds x 30 s
#   ROUNDS=5 TIME=20 THREADS=8 WORKLOADS="read_only" scripts/bench-oltp-vs-sysbench.sh
#   LS_BINARY=/tmp/lockstep scripts/bench-oltp-vs-sysbench.sh
#   LS_CLIENTS="old=/tmp/lockstep-old new=/tmp/lockstep-new" scripts/bench-oltp-vs-sysbench.sh
#
# LS_CLIENTS names lockstep binaries to run as clients instead of the one
# that serves (name=path, each name a column): sysbench and these run in
# turn, forward in odd rounds and backward in even ones (ABBA for two).
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
CLIENTS="sysbench"
if [ -z "${LS_CLIENTS:-}" ]; then LS_CLIENTS="bench-oltp=$OUT/lockstep"; fi
for c in $LS_CLIENTS; do
  name=${c%%=*}; path=${c#*=}
  [ "$name" = sysbench ] && { echo "client name sysbench is taken" >&2; exit 2; }
  [ "$path" = "$OUT/lockstep" ] || cp "$path" "$OUT/client-$name"
  [ "$path" = "$OUT/lockstep" ] && ln -sf lockstep "$OUT/client-$name"
  CLIENTS="$CLIENTS $name"
done

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

echo "round,workload,client,tps,p95_ms,errors,cpu_us_per_txn" > "$OUT/runs.csv"
run() { # round workload client
  local r=$1 w=$2 c=$3 log="$OUT/$3-$2-$1.log"
  if [ "$c" = sysbench ]; then
    # shellcheck disable=SC2086
    /usr/bin/time -f "cpu %U %S" -o "$log.time" sysbench "oltp_$w" $SB --threads="$THREADS" --time="$TIME" --report-interval=0 run > "$log" 2>&1
    awk -v r="$r" -v w="$w" '
      FNR == 1 && NR > 1 {cpu = $2 + $3; next}
      /transactions:/ {n=$2; gsub(/\(/, "", $3); t=$3} /95th percentile:/ {p=$3} /ignored errors:/ {e=$3}
      END {printf "%s,%s,sysbench,%.2f,%.2f,%d,%.1f\n", r, w, t, p, e, (n > 0 ? cpu * 1e6 / n : 0)}' "$log" "$log.time"
  else
    # shellcheck disable=SC2086
    /usr/bin/time -f "cpu %U %S" -o "$log.time" "$OUT/client-$c" bench oltp "$w" --dsn "$DSN" $SIZE --threads "$THREADS" --time "$TIME" --report-interval 0 --output csv > "$log" 2>"$log.err"
    awk -F, -v r="$r" -v w="$w" -v c="$c" '
      FNR == 1 && NR > 1 {split($0, a, " "); cpu = a[2] + a[3]; next}
      FNR == 2 {n = $6; t = $7; p = $12; e = $16 + $17}
      END {printf "%s,%s,%s,%.2f,%.2f,%d,%.1f\n", r, w, c, t, p, e, (n > 0 ? cpu * 1e6 / n : 0)}' "$log" "$log.time"
  fi | tee -a "$OUT/runs.csv"
}
for r in $(seq 1 "$ROUNDS"); do
  order=$CLIENTS
  if [ $((r % 2)) = 0 ]; then order=$(echo "$CLIENTS" | tr ' ' '\n' | tac | tr '\n' ' '); fi
  for w in $WORKLOADS; do
    for c in $order; do run "$r" "$w" "$c"; done
  done
done

echo
echo "$THREADS threads, $TABLES table(s) of $TABLE_SIZE rows, $ROUNDS rounds of ${TIME}s per client and workload (errors: sysbench's ignored errors, bench oltp's retries + errors)"
echo "ratios are client / sysbench in the same round; sysbench spread: its slowest and fastest round / its median; cpu: the client's user + system time per transaction"
awk -F, -v clients="$CLIENTS" '
  function median(a, n,   i, j, t, b) { for (i = 1; i <= n; i++) b[i] = a[i]
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (b[j] < b[i]) { t = b[i]; b[i] = b[j]; b[j] = t }
    return n % 2 ? b[(n + 1) / 2] : (b[n / 2] + b[n / 2 + 1]) / 2 }
  NR > 1 { tps[$2, $3, $1] = $4; p95[$2, $3, $1] = $5; cpu[$2, $3, $1] = $7; if ($1 > n) n = $1; if (!($2 in seen)) { seen[$2] = 1; order[++nw] = $2 } }
  END {
    nc = split(clients, cl, " ")
    for (k = 1; k <= nw; k++) {
      w = order[k]
      for (r = 1; r <= n; r++) { st[r] = tps[w, "sysbench", r]; sp[r] = p95[w, "sysbench", r]; sc[r] = cpu[w, "sysbench", r] }
      ms = median(st, n); lo = 1e18; hi = 0
      for (r = 1; r <= n; r++) { if (st[r] / ms < lo) lo = st[r] / ms; if (st[r] / ms > hi) hi = st[r] / ms }
      printf "%-13s %-12s TPS %9.1f  p95 %7.2f ms  cpu %6.1f us/txn  spread %.3f..%.3f\n", w, "sysbench", ms, median(sp, n), median(sc, n), lo, hi
      for (i = 2; i <= nc; i++) {
        c = cl[i]; lo = 1e18; hi = 0; plo = 1e18; phi = 0
        for (r = 1; r <= n; r++) {
          bt[r] = tps[w, c, r]; bp[r] = p95[w, c, r]; bc[r] = cpu[w, c, r]
          rt[r] = bt[r] / st[r]; rp[r] = (sp[r] > 0 ? bp[r] / sp[r] : 0)
          if (rt[r] < lo) lo = rt[r]; if (rt[r] > hi) hi = rt[r]; if (rp[r] < plo) plo = rp[r]; if (rp[r] > phi) phi = rp[r]
        }
        printf "%-13s %-12s TPS %9.1f  p95 %7.2f ms  cpu %6.1f us/txn  TPS ratio %.3f (rounds %.3f..%.3f)  p95 ratio %.3f (%.3f..%.3f)\n", "", c, median(bt, n), median(bp, n), median(bc, n), median(rt, n), lo, hi, median(rp, n), plo, phi
      }
    }
  }' "$OUT/runs.csv"
