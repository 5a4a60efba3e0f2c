# Helpers for benchmarks whose systems take turns, sourced by bench-tpcc-ab.sh,
# bench-tpcc-pairs.sh, bench-write-pairs.sh, bench-durability-cost.sh and
# bench-sync-delay.sh; not run on its own.

tick=$(getconf CLK_TCK)

# cpu_ticks PID: the process's user + system CPU so far, in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# quiet PID...: wait (at most 120 s) until none of the processes used more
# than 5% of a core over the last second, so that a checkpoint or a purge
# left from one system's turn does not fall in the next one's.
quiet() {
  for _ in $(seq 1 120); do
    local busy=0 before=() i=0 p
    for p in "$@"; do before+=("$(cpu_ticks "$p")"); done
    sleep 1
    for p in "$@"; do
      [ $(( $(cpu_ticks "$p") - before[i] )) -gt $((tick / 20)) ] && busy=1
      i=$((i + 1))
    done
    [ "$busy" = 0 ] && return
  done
  echo "(servers still busy after 120 s; running anyway)"
}

# MEDIAN_AWK defines median(a, n) for awk programs: the median of a[1..n]
# (sorts a in place).
MEDIAN_AWK='
  function median(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
    return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
  }'

# ready PORT: wait (at most 2 minutes) until a server answers on PORT.
ready() { for _ in $(seq 1 600); do mysql -h127.0.0.1 -P"$1" -uroot -e 'SELECT 1' >/dev/null 2>&1 && return; sleep 0.2; done; echo "server on $1 not ready" >&2; exit 1; }

# prepare_sbtest BINARY DIR PORT LOG: a lockstep data directory DIR with
# sysbench's tables (the caller's `sb PORT` gives their options), prepared
# through a server on PORT (output to LOG) that is stopped afterwards; the
# checkpoint it writes on the way out keeps copies' recovery short.
prepare_sbtest() {
  local pid
  "$1" serve --port "$3" --datadir "$2" >"$4" 2>&1 & pid=$!
  ready "$3"
  mysql -h127.0.0.1 -P"$3" -uroot -e 'CREATE DATABASE sbtest'
  # shellcheck disable=SC2046
  sysbench oltp_write_only $(sb "$3") --threads=4 prepare >/dev/null
  kill "$pid"; wait "$pid" || true
}
