#!/usr/bin/env bash
# Memory per row and GC cost of a loaded server (issue 35 item 3;
# docs/benchmarks/notes.md, "Memory per row at 4 x 1M sysbench rows"):
#
#   scripts/bench-memrow.sh NAME BINARY ROWS_PER_TABLE [SECONDS] [THREADS]
#   scripts/bench-memrow.sh old /tmp/memrow/lockstep-old 1000000 30 16
#
# Starts BINARY on a fresh data directory (/tmp/memrow/d-NAME, port $PORT or
# 3471, metrics on PORT+1000, pprof on PORT+2000), prepares 4 tables of
# ROWS_PER_TABLE sysbench rows, then prints one line: the prepare time, the
# server's VmRSS after the load, its live heap after a forced GC (pprof's
# HeapAlloc) and VmRSS after that GC, and that forced GC's cost from the
# server's GODEBUG=gctrace=1 line (the wall time of its concurrent mark and
# its CPU time: a full mark of the loaded heap). Then it runs
# oltp_point_select at THREADS (default 16) for 5 s of warm-up and SECONDS
# (default 30) measured, and adds its qps, the GCs that ran in the measured
# run with the CPU they took (summed from gctrace) as a share of the
# server's CPU time over the run (/proc/PID/stat), and the load average.
# (The go_cpu_classes_* metrics are only updated at the end of a GC, so a
# window without a GC shows nothing there.) WRITE=1 then also runs
# oltp_write_only at THREADS for SECONDS and adds its tps, p95 and max
# latency (issue 35: write max latency at 4 x 1M within 2x of 4 x 100k).
# KEEP=1 leaves the data directory in place.
set -e
name=$1; BIN=$2; rows=$3; t=${4:-30}; th=${5:-16}
PORT=${PORT:-3471}; MP=$((PORT + 1000)); PP=$((PORT + 2000))
D=/tmp/memrow/d-$name; rm -rf "$D"; mkdir -p "$D"
GODEBUG=gctrace=1 LOCKSTEP_PPROF=127.0.0.1:$PP "$BIN" serve --datadir "$D" --port "$PORT" \
  --metrics-address 127.0.0.1:$MP >"$D/server.log" 2>&1 </dev/null &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
# gcs FROM TO: "GCs cpu-ms max-mark-ms" of the gctrace lines FROM..TO of the log
gcs() {
  sed -n "$1,$2p" "$D/server.log" | awk '/^gc [0-9]+ @/ {
      n++
      for (i = 1; i <= NF; i++) {
        if ($(i+1) == "ms" && $(i+2) == "clock,") { split($i, c, "+"); if (c[2] > mk) mk = c[2] }
        if ($(i+1) == "ms" && $(i+2) == "cpu,") { m = split($i, p, /[+\/]/); for (j = 1; j <= m; j++) cpu += p[j] }
      }
    } END {printf "%d %.0f %.0f", n, cpu, mk}'
}
lines() { wc -l <"$D/server.log"; }
ticks() { awk '{print $14 + $15}' /proc/$pid/stat; }
for _ in $(seq 300); do mariadb -h127.0.0.1 -P"$PORT" -uroot -e 'select 1' >/dev/null 2>&1 && break; sleep 0.2; done
mariadb -h127.0.0.1 -P"$PORT" -uroot -e 'create database sbtest'
SB="--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --mysql-db=sbtest --tables=4 --table-size=$rows"
t0=$(date +%s)
sysbench oltp_read_write $SB --threads=4 prepare >"$D/prepare.log" 2>&1
prep=$(($(date +%s) - t0))
sleep 5
rss() { awk '$1=="VmRSS:" {printf "%.0f", $2 / 1024}' /proc/$pid/status; }
rss1=$(rss)
l0=$(lines)
heap=$(curl -s "http://127.0.0.1:$PP/debug/pprof/heap?debug=1&gc=1" | awk '/^# HeapAlloc =/ {printf "%.0f", $4 / 1048576}')
curl -s "http://127.0.0.1:$PP/debug/pprof/heap?gc=1" >"$D/heap.pprof"
sleep 1
rss2=$(rss)
read -r fn fcpu fmark <<<"$(gcs $((l0 + 1)) "$(lines)")"
fcpu=$((fcpu / (fn > 0 ? fn : 1))) # two forced GCs (the two heap requests): per GC
sysbench oltp_point_select $SB --threads="$th" --time=5 run >/dev/null 2>&1
l1=$(lines); t0=$(ticks)
sysbench oltp_point_select $SB --threads="$th" --time="$t" run >"$D/point_select.log" 2>&1
t1=$(ticks)
read -r ngc gcms gcmark <<<"$(gcs $((l1 + 1)) "$(lines)")"
rss3=$(rss)
qps=$(awk '/queries:/ {gsub(/[()]/,"",$3); print $3}' "$D/point_select.log")
hz=$(getconf CLK_TCK)
gcpct=$(awk -v g="$gcms" -v t="$((t1 - t0))" -v hz="$hz" 'BEGIN {if (t > 0) printf "%.1f", 100 * g / (1000 * t / hz)}')
wr=""
if [ -n "${WRITE:-}" ]; then
  sysbench oltp_write_only $SB --threads="$th" --time="$t" --percentile=95 run >"$D/write_only.log" 2>&1
  wr=$(awk '/transactions:/ {gsub(/[()]/,"",$3); tps=$3} /95th percentile:/ {p=$3} /max:/ {m=$2} END {printf "write_only tps=%s p95=%sms max=%sms", tps, p, m}' "$D/write_only.log")
fi
echo "$name rows=4x$rows prepare=${prep}s rss=${rss1}MB heap-after-gc=${heap}MB rss-after-gc=${rss2}MB" \
  "forced-gc mark=${fmark}ms cpu=${fcpu}ms" \
  "point_select th=$th qps=$qps gcs=$ngc gc-cpu=${gcms}ms (${gcpct}% of the server's CPU) max-mark=${gcmark}ms" \
  "rss-after-run=${rss3}MB $wr load=$(cut -d' ' -f1-3 /proc/loadavg)"
kill $pid; wait $pid 2>/dev/null || true
[ -n "${KEEP:-}" ] || rm -rf "$D/log"
