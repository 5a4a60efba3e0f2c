# Helpers sourced by scripts/bench-recovery.sh, bench-checkpoint-memory.sh and
# bench-checkpoint-latency.sh; not run on its own. Expects OUT and PORT set.
#   LSM=path   test a prebuilt binary (default: build ./cmd/lockstep into $OUT)
LS_PID=
trap '[ -n "$LS_PID" ] && kill -9 "$LS_PID" 2>/dev/null; [ -n "${SAMPLER_PID:-}" ] && kill "$SAMPLER_PID" 2>/dev/null; true' EXIT

build_lsm() { if [ -z "${LSM:-}" ]; then LSM=$OUT/lockstep; go build -o "$LSM" ./cmd/lockstep; fi; }

# start_lsm LOGFILE SERVE-FLAGS...: start a server on $PORT in the background -> LS_PID
start_lsm() { local log=$1; shift; "$LSM" serve --port "$PORT" "$@" >"$log" 2>&1 </dev/null & LS_PID=$!; }

# wait_ready [SECONDS]: poll SELECT 1 every 0.05 s; fails if the server exits or time runs out
wait_ready() {
  local deadline=$((SECONDS + ${1:-600}))
  until mariadb -h127.0.0.1 -P"$PORT" -uroot -e 'SELECT 1' >/dev/null 2>&1; do
    kill -0 "$LS_PID" 2>/dev/null || { echo "server exited" >&2; return 1; }
    [ $SECONDS -lt $deadline ] || { echo "not ready after ${1:-600}s" >&2; return 1; }
    sleep 0.05
  done
}

q() { mariadb -h127.0.0.1 -P"$PORT" -uroot -N -B -e "$*"; }
st() { q "SHOW GLOBAL STATUS LIKE '$1'" | cut -f2; }          # st NAME -> value
kb() { awk -v k="$2:" '$1==k {print $2}' "/proc/$1/status"; }  # kb PID VmRSS -> kB
now() { date +%s.%N; }
mb() { awk -v b="$1" 'BEGIN {printf "%.0f", b / 1048576}'; }

# heap PPROF_ADDR [gc]: "HeapAlloc HeapInuse HeapSys NextGC NumGC" in bytes, from
# /debug/pprof/heap?debug=1 (with gc: after a forced collection)
heap() {
  curl -s "http://$1/debug/pprof/heap?debug=1${2:+&gc=1}" |
    awk '/^# HeapAlloc =/ {a=$4} /^# HeapInuse =/ {i=$4} /^# HeapSys =/ {s=$4}
         /^# NextGC =/ {n=$4} /^# NumGC =/ {g=$4} END {print a, i, s, n, g}'
}

# start_fill: sysbench prepare ($SB) on a server whose checkpoint then holds
# the prepared tables (clean shutdown), and a server started again on that
# datadir with no checkpoint from here on, under oltp_write_only at
# $THREADS in the background ($SB_PID; the server is $LS_PID). For the
# recovery scripts, which then let the log grow and kill -9.
start_fill() {
  start_lsm "$OUT/prepare.log" --datadir "$OUT/data" --checkpoint-log-size 1M
  wait_ready 60
  q "CREATE DATABASE sbtest"
  sysbench oltp_read_write $SB --threads=4 prepare > "$OUT/sysbench-prepare.log"
  until [ "$(st Lockstep_checkpoints)" -ge 1 ]; do sleep 0.2; done
  kill "$LS_PID"; wait "$LS_PID" || true

  start_lsm "$OUT/fill.log" --datadir "$OUT/data" --checkpoint-log-size 64G
  wait_ready 120
  sysbench oltp_write_only $SB --threads="$THREADS" --time=86400 --report-interval=10 run > "$OUT/sysbench-fill.log" 2>&1 &
  SB_PID=$!
}
