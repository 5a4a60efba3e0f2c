#!/usr/bin/env bash
# Cost of the statistics counters (issue 34 item 2): the default build
# ("on") against one built with -tags nocounters ("off": no counter,
# histogram or statistics-only clock read on the hot paths; docs/metrics.md
# "Cost"), sysbench oltp_point_select and oltp_write_only at $THREADS
# threads, in the same run:
#
#   ROUNDS=4 TIME=30 scripts/bench-counters.sh
#
# A round is, for each workload, the cells on off off on (ABBA; each cell
# scripts/bench-one.sh: a fresh data directory, 4 x $TABLE_SIZE rows,
# $WARMUP s warm-up, $TIME s measured). Per round and workload it prints
# on/off = mean(on cells) / mean(off cells) of TPS; at the end the median
# TPS of each side and the median of the per-round ratios. 1 - ratio is the
# counters' cost; the goal is under 2%. The load average is printed before
# and after: a loaded machine's cells spread by more than that.
#
#   ROUNDS (2)  TIME (30)  THREADS (16)  TABLE_SIZE (100000)  WARMUP (5)
#   WORKLOADS ("oltp_point_select oltp_write_only")  OUT (/tmp/bench-counters)
#
# Each cell also records the server's CPU time per transaction
# (/proc/PID/stat over the measured run), and the summary gives its
# per-round on/off ratio beside the TPS one: CPU per transaction moves less
# than TPS when the two cores are shared. SUMMARY_ONLY=1 re-prints the
# summary of an existing $OUT/cells.txt without running anything.
set -e
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-2}; TIME=${TIME:-30}; THREADS=${THREADS:-16}
WORKLOADS=${WORKLOADS:-"oltp_point_select oltp_write_only"}
OUT=${OUT:-/tmp/bench-counters}
export TABLE_SIZE=${TABLE_SIZE:-100000} WARMUP=${WARMUP:-5} PORT=${PORT:-3490}
mkdir -p "$OUT"
res=$OUT/cells.txt
if [ -z "${SUMMARY_ONLY:-}" ]; then
ON=$OUT/lockstep-on; OFF=$OUT/lockstep-off
go build -o "$ON" ./cmd/lockstep
go build -tags nocounters -o "$OFF" ./cmd/lockstep
: > "$res"
echo "commit $(git rev-parse --short HEAD); rounds=$ROUNDS time=${TIME}s threads=$THREADS rows=4x$TABLE_SIZE warmup=${WARMUP}s" | tee "$OUT/header.txt"
echo "load before: $(uptime)" | tee -a "$OUT/header.txt"

cell() { # round side workload
  local line
  if [ "$2" = on ]; then bin=$ON; else bin=$OFF; fi
  line=$(scripts/bench-one.sh "counters-$2" "$bin" "$3" "$THREADS" "$TIME")
  echo "round=$1 side=$2 $line load=$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$res"
}

for r in $(seq "$ROUNDS"); do
  for wl in $WORKLOADS; do
    for side in on off off on; do cell "$r" "$side" "$wl"; done
  done
done
echo "load after: $(uptime)" | tee -a "$OUT/header.txt"
fi

# tps of round r, side s, workload w -> mean; then per-round ratios and medians
awk -v rounds="$ROUNDS" -v wls="$WORKLOADS" '
  function median(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
    return (n % 2) ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
  }
  {
    for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
    r = f["round"]; s = f["side"]; w = $4; tps = f["tps"]
    sum[r, s, w] += tps; cnt[r, s, w]++
    if (f["server_cpu_us_per_txn"] != "") { csum[r, s, w] += f["server_cpu_us_per_txn"]; ccnt[r, s, w]++ }
    all[s, w, ++n[s, w]] = tps
  }
  END {
    nw = split(wls, W, " ")
    for (k = 1; k <= nw; k++) {
      w = W[k]; m = 0
      for (r = 1; r <= rounds; r++) {
        if (!cnt[r, "on", w] || !cnt[r, "off", w]) continue
        on = sum[r, "on", w] / cnt[r, "on", w]; off = sum[r, "off", w] / cnt[r, "off", w]
        if (off <= 0) continue
        ratio[++m] = on / off
        cpu = ""
        if (ccnt[r, "on", w] && ccnt[r, "off", w] && csum[r, "off", w] > 0) {
          con = csum[r, "on", w] / ccnt[r, "on", w]; coff = csum[r, "off", w] / ccnt[r, "off", w]
          cratio[++mc] = con / coff
          cpu = sprintf("; server CPU/txn on %.2f off %.2f us, on/off %.3f", con, coff, con / coff)
        }
        printf "round %d %s: on %.1f off %.1f on/off %.3f%s\n", r, w, on, off, on / off, cpu
      }
      for (i = 1; i <= n["on", w]; i++) a[i] = all["on", w, i]
      mon = median(a, n["on", w])
      for (i = 1; i <= n["off", w]; i++) b[i] = all["off", w, i]
      moff = median(b, n["off", w])
      printf "median %s: on %.1f (n=%d) off %.1f (n=%d); median per-round on/off %.3f", w, mon, n["on", w], moff, n["off", w], median(ratio, m)
      if (mc > 0) printf "; server CPU/txn median per-round on/off %.3f", median(cratio, mc)
      printf "\n"
      delete a; delete b; delete ratio; delete cratio; mc = 0
    }
  }' "$res" | tee "$OUT/summary.txt"
