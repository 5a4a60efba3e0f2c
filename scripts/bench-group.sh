#!/usr/bin/env bash
# Group replication measurements (issue 32; docs/benchmarks/notes.md, "Group
# replication (3 members on one machine)"). Starts, all on 127.0.0.1:
#   - a 3-member lockstep group (SQL ports PORT_BASE+1..3),
#   - a standalone lockstep (PORT_BASE),
#   - MariaDB 10.11 primary (PORT_BASE+4) + parallel replica (PORT_BASE+5):
#     innodb_flush_log_at_trx_commit=1, binary log with sync_binlog=1 on the
#     primary, GTID replication with slave_parallel_threads=4 optimistic
#     (../shared/mariadb-baseline's settings),
# prepares sysbench's 4 tables x TABLE_SIZE rows on each, then runs STEPS:
#
#   matrix   BENCH_WORKLOADS x BENCH_THREADS, ROUNDS rounds; in each round
#            the systems take turns in a rotating order: group, group with
#            its two secondaries at nice 19 (renice, back to 0 after),
#            standalone, MariaDB. Before every run the script waits until no
#            server uses more than 5% of a core (replicas caught up), then
#            warms the system for BENCH_WARMUP s. At 64 threads of
#            oltp_write_only, scripts/grouplag samples the replicas' lag
#            every 100 ms (group and MariaDB; not the niced group).
#   seckill  oltp_write_only at SECKILL_THREADS against the group's primary
#            for SECKILL_TIME s with --report-interval=1; a secondary gets
#            SIGKILL at SECKILL_AT s and restarts at SECKILL_RESTART s;
#            SECKILL_RUNS runs, alternating the secondary. Logs when the
#            restarted member answers (it replays its own log first) and
#            when it is within 100 log entries of the primary.
#
#   scripts/bench-group.sh                                  # everything, ~45 min
#   STEPS=seckill scripts/bench-group.sh
#   ROUNDS=1 BENCH_TIME=10 BENCH_THREADS=16 STEPS=matrix scripts/bench-group.sh
#   LS_BINARY=/tmp/ls scripts/bench-group.sh                # a prebuilt binary
#
# Results: $OUT/runs.csv (one line per run), $OUT/lag-*.txt, $OUT/seckill-*.log
# and a summary on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-turns-lib.sh
. scripts/mariadb-lib.sh

STEPS=${STEPS:-"matrix seckill"}
BENCH_WORKLOADS=${BENCH_WORKLOADS:-"oltp_write_only oltp_insert"}
BENCH_THREADS=${BENCH_THREADS:-"16 64"}
BENCH_TIME=${BENCH_TIME:-20}
BENCH_WARMUP=${BENCH_WARMUP:-5}
ROUNDS=${ROUNDS:-3}
TABLE_SIZE=${TABLE_SIZE:-100000}
SYSTEMS=${SYSTEMS:-"group group-nice standalone mariadb"}
SECKILL_THREADS=${SECKILL_THREADS:-16}
SECKILL_TIME=${SECKILL_TIME:-75}
SECKILL_AT=${SECKILL_AT:-15}
SECKILL_RESTART=${SECKILL_RESTART:-30}
SECKILL_RUNS=${SECKILL_RUNS:-2}
OUT=${OUT:-/tmp/lockstep-bench-group}
PORT_BASE=${PORT_BASE:-3490}
GPORT_BASE=${GPORT_BASE:-3590}
export PATH="$PATH:/usr/sbin:/sbin"

rm -rf "$OUT"; mkdir -p "$OUT"
if [ -n "${LS_BINARY:-}" ]; then cp "$LS_BINARY" "$OUT/lockstep"; else go build -o "$OUT/lockstep" ./cmd/lockstep; fi
go build -o "$OUT/grouplag" ./scripts/grouplag

PORT_S=$PORT_BASE
PORT_MP=$((PORT_BASE + 4))
PORT_MR=$((PORT_BASE + 5))
declare -A MPID # group member id -> pid
SEEDS=$(for i in 1 2 3; do printf '%s%d=127.0.0.1:%d' "$([ "$i" = 1 ] || echo ,)" "$i" $((GPORT_BASE + i)); done)

cleanup() {
  for p in "${MPID[@]}" ${PID_S:-}; do kill "$p" 2>/dev/null || true; done
  for d in mdbp mdbr; do [ -f "$OUT/$d/mdb.pid" ] && kill "$(cat "$OUT/$d/mdb.pid")" 2>/dev/null || true; done
}
trap cleanup EXIT

# start_member ID [--group-bootstrap]: start group member ID (its data in
# $OUT/m$ID, output appended to $OUT/m$ID.log) -> MPID[ID].
start_member() {
  local id=$1; shift
  "$OUT/lockstep" serve --datadir "$OUT/m$id" --port $((PORT_BASE + id)) --server-id "$id" \
    --group-local-address "127.0.0.1:$((GPORT_BASE + id))" --group-seeds "$SEEDS" "$@" >>"$OUT/m$id.log" 2>&1 &
  MPID[$id]=$!
}
member_port() { echo $((PORT_BASE + $1)); }
# gstatus ID NAME: member ID's Lockstep_group_replication_NAME; empty while
# it does not answer.
gstatus() { { mysql -h127.0.0.1 -P"$(member_port "$1")" -uroot -N -B -e "SHOW GLOBAL STATUS LIKE 'Lockstep_group_replication_$2'" 2>/dev/null || true; } | cut -f2; }
# primary_id: the member that takes writes (waits up to 60 s).
primary_id() {
  for _ in $(seq 1 600); do
    for i in 1 2 3; do [ "$(gstatus "$i" primary)" = 1 ] && { echo "$i"; return; }; done
    sleep 0.1
  done
  echo "no primary" >&2; exit 1
}
secondaries() { local p; p=$(primary_id); for i in 1 2 3; do [ "$i" = "$p" ] || echo "$i"; done; }
# group_converged: every member has applied the primary's applied index.
group_converged() {
  for _ in $(seq 1 3000); do
    local a1 a2 a3; a1=$(gstatus 1 applied_index); a2=$(gstatus 2 applied_index); a3=$(gstatus 3 applied_index)
    [ -n "$a1" ] && [ "$a1" = "$a2" ] && [ "$a2" = "$a3" ] && return
    sleep 0.1
  done
  echo "group did not converge" >&2; exit 1
}
mq() { mariadb -S "$OUT/$1/mdb.sock" -uroot -N -B -e "$2"; }
mdb_caught_up() {
  local target; target=$(mq mdbp "SELECT @@gtid_binlog_pos")
  for _ in $(seq 1 6000); do [ "$(mq mdbr 'SELECT @@gtid_slave_pos')" = "$target" ] && return; sleep 0.1; done
  echo "MariaDB replica did not catch up" >&2; exit 1
}

# --- start everything
for i in 1 2 3; do start_member "$i" --group-bootstrap; done
"$OUT/lockstep" serve --datadir "$OUT/standalone" --port "$PORT_S" >"$OUT/standalone.log" 2>&1 &
PID_S=$!
start_mariadb "$OUT/mdbp" "$PORT_MP" 1 sbtest sbtest
start_mariadb "$OUT/mdbr" "$PORT_MR" 0 sbtest sbtest "$(printf '%s\n' server_id=2 relay_log=relay-bin \
  slave_parallel_threads=4 slave_parallel_mode=optimistic)"
mq mdbp "CREATE USER 'repl'@'127.0.0.1' IDENTIFIED BY 'repl'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'127.0.0.1'; RESET MASTER"
mq mdbr "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=$PORT_MP, MASTER_USER='repl', MASTER_PASSWORD='repl', MASTER_USE_GTID=slave_pos; START SLAVE"
for p in "$PORT_S" $((PORT_BASE + 1)) $((PORT_BASE + 2)) $((PORT_BASE + 3)); do ready "$p"; done
P=$(primary_id)
echo "group primary: member $P"

sb() { # system -> sysbench connection options
  case $1 in
    group | group-nice) echo "--mysql-host=127.0.0.1 --mysql-port=$(member_port "$(primary_id)") --mysql-user=root" ;;
    standalone) echo "--mysql-host=127.0.0.1 --mysql-port=$PORT_S --mysql-user=root" ;;
    mariadb) echo "--mysql-host=127.0.0.1 --mysql-port=$PORT_MP --mysql-user=sbtest --mysql-password=sbtest" ;;
  esac
}
common="--db-driver=mysql --mysql-db=sbtest --tables=4 --table-size=$TABLE_SIZE"
mysql -h127.0.0.1 -P"$(member_port "$P")" -uroot -e "CREATE DATABASE sbtest"
mysql -h127.0.0.1 -P"$PORT_S" -uroot -e "CREATE DATABASE sbtest"
mq mdbp "CREATE DATABASE sbtest"
for sys in group standalone mariadb; do
  t0=$(date +%s.%N)
  # shellcheck disable=SC2046
  sysbench oltp_write_only $common $(sb $sys) --threads=4 prepare >"$OUT/$sys-prepare.log" 2>&1
  echo "prepared $sys in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}') s"
done
group_converged
mdb_caught_up

all_pids() { echo "${MPID[@]}" "$PID_S" "$(cat "$OUT/mdbp/mdb.pid")" "$(cat "$OUT/mdbr/mdb.pid")"; }

# cell_pids SYSTEM: the processes a system's run costs, the one taking
# writes first: "primary secondary secondary", "standalone", "primary replica".
cell_pids() {
  case $1 in
    group*) local p s; p=$(primary_id); echo -n "${MPID[$p]}"; for s in $(secondaries); do echo -n " ${MPID[$s]}"; done; echo ;;
    standalone) echo "$PID_S" ;;
    mariadb) echo "$(cat "$OUT/mdbp/mdb.pid") $(cat "$OUT/mdbr/mdb.pid")" ;;
  esac
}

# run_cell WORKLOAD THREADS ROUND SYSTEM: one run; appends to runs.csv, and
# to cpu.csv the CPU time (ms) each of the system's processes used from the
# start of the timed run until its replicas had caught up, per transaction.
run_cell() {
  local wl=$1 th=$2 r=$3 sys=$4 log="$OUT/$4-$1-t$2-r$3.log" lagpid="" s
  # shellcheck disable=SC2046
  quiet $(all_pids)
  if [ "$sys" = group-nice ]; then for s in $(secondaries); do renice -n 19 -p "${MPID[$s]}" >/dev/null; done; fi
  # shellcheck disable=SC2046
  sysbench "$wl" $common $(sb "$sys") --threads="$th" --time="$BENCH_WARMUP" run >/dev/null 2>&1 || true
  if [ "$wl" = oltp_write_only ] && [ "$th" = 64 ] && { [ "$sys" = group ] || [ "$sys" = mariadb ]; }; then
    if [ "$sys" = group ]; then
      local reps="" p; p=$(primary_id)
      for s in $(secondaries); do reps="$reps -replica root@tcp(127.0.0.1:$(member_port "$s"))/"; done
      # shellcheck disable=SC2086
      "$OUT/grouplag" -kind lockstep -load "${BENCH_TIME}s" -csv "$OUT/lag-$sys-r$r.csv" \
        -primary "root@tcp(127.0.0.1:$(member_port "$p"))/" $reps >"$OUT/lag-$sys-r$r.txt" 2>&1 &
    else
      "$OUT/grouplag" -kind mariadb -load "${BENCH_TIME}s" -csv "$OUT/lag-$sys-r$r.csv" \
        -primary "root@unix($OUT/mdbp/mdb.sock)/" -replica "root@unix($OUT/mdbr/mdb.sock)/" >"$OUT/lag-$sys-r$r.txt" 2>&1 &
    fi
    lagpid=$!
  fi
  local load; load=$(cut -d' ' -f1 /proc/loadavg)
  local pids ticks0=() ticks1=() pid; read -r -a pids <<<"$(cell_pids "$sys")"
  for pid in "${pids[@]}"; do ticks0+=("$(cpu_ticks "$pid")"); done
  # shellcheck disable=SC2046
  sysbench "$wl" $common $(sb "$sys") --threads="$th" --time="$BENCH_TIME" --percentile=95 run >"$log" 2>&1 || true
  [ -z "$lagpid" ] || wait "$lagpid" || echo "(grouplag failed: $OUT/lag-$sys-r$r.txt)"
  if [ "$sys" = group-nice ]; then for s in 1 2 3; do renice -n 0 -p "${MPID[$s]}" >/dev/null; done; fi
  case $sys in group*) group_converged ;; mariadb) mdb_caught_up ;; esac
  local txns cpu="" i; txns=$(awk '/transactions:/ {print $2 + 0}' "$log")
  for i in "${!pids[@]}"; do
    cpu="$cpu,$(awk -v a="${ticks0[$i]}" -v b="$(cpu_ticks "${pids[$i]}")" -v t="$tick" -v n="${txns:-0}" \
      'BEGIN {printf "%.3f", (n > 0 ? (b - a) * 1000 / t / n : 0)}')"
  done
  echo "$wl,$th,$r,$sys,${txns:-0}$cpu" >>"$OUT/cpu.csv"
  awk -v wl="$wl" -v th="$th" -v r="$r" -v s="$sys" -v la="$load" \
    '/transactions:/ {gsub(/[()]/,"",$3); tps=$3} /95th percentile:/ {p95=$3} /^ *errors:/ {err=$2}
    END {printf "%s,%s,%s,%s,%s,%s,%s,%s\n", wl, th, r, s, tps+0, p95+0, err+0, la}' "$log" | tee -a "$OUT/runs.csv"
}

if [[ " $STEPS " == *" matrix "* ]]; then
  echo "workload,threads,round,system,tps,p95_ms,errors,load1" >"$OUT/runs.csv"
  echo "workload,threads,round,system,transactions,cpu_ms_per_txn (primary or standalone, then each replica)" >"$OUT/cpu.csv"
  read -r -a sys <<<"$SYSTEMS"
  n=${#sys[@]}
  for wl in $BENCH_WORKLOADS; do
    for th in $BENCH_THREADS; do
      for r in $(seq 1 "$ROUNDS"); do
        for k in $(seq 0 $((n - 1))); do run_cell "$wl" "$th" "$r" "${sys[$(((k + r - 1) % n))]}"; done
      done
    done
  done
  echo
  echo "medians over $ROUNDS rounds (TPS; min-max):"
  awk -F, "$MEDIAN_AWK"'
    NR > 1 { k = $1 " " $2 " " $4; n[k]++; v[k, n[k]] = $5; if (!(k in seen)) { seen[k] = 1; keys[++nk] = k } }
    END { for (i = 1; i <= nk; i++) { k = keys[i]; lo = 1e18; hi = 0
      for (j = 1; j <= n[k]; j++) { a[j] = v[k, j]; if (a[j] < lo) lo = a[j]; if (a[j] > hi) hi = a[j] }
      printf "%-40s %8.0f  (%.0f-%.0f)\n", k, median(a, n[k]), lo, hi } }' "$OUT/runs.csv"
  echo
  echo "CPU ms per transaction, medians over $ROUNDS rounds (writer; replicas):"
  awk -F, "$MEDIAN_AWK"'
    NR > 1 { k = $1 " " $2 " " $4; n[k]++; nc[k] = NF - 5; for (c = 6; c <= NF; c++) v[k, c, n[k]] = $c
      if (!(k in seen)) { seen[k] = 1; keys[++nk] = k } }
    END { for (i = 1; i <= nk; i++) { k = keys[i]; line = ""
      for (c = 6; c < 6 + nc[k]; c++) { for (j = 1; j <= n[k]; j++) a[j] = v[k, c, j]; line = line sprintf(" %.3f", median(a, n[k])) }
      printf "%-40s%s\n", k, line } }' "$OUT/cpu.csv"
  for f in "$OUT"/lag-*.txt; do [ -f "$f" ] && { echo "== $f"; cat "$f"; }; done
fi

if [[ " $STEPS " == *" seckill "* ]]; then
  for run in $(seq 1 "$SECKILL_RUNS"); do
    # shellcheck disable=SC2046
    quiet $(all_pids)
    read -r -a secs <<<"$(secondaries | tr '\n' ' ')"
    victim=${secs[$(((run - 1) % 2))]}
    log="$OUT/seckill-$run.log"
    echo "seckill run $run: primary member $(primary_id), killing member $victim at ${SECKILL_AT}s, restart at ${SECKILL_RESTART}s; load $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$log"
    # shellcheck disable=SC2046
    sysbench oltp_write_only $common $(sb group) --threads="$SECKILL_THREADS" --time="$SECKILL_TIME" --report-interval=1 run >>"$log" 2>&1 &
    sbpid=$!
    t0=$(date +%s.%N)
    sleep "$SECKILL_AT"
    kill -9 "${MPID[$victim]}"
    echo "killed member $victim" >>"$OUT/m$victim.log"
    sleep $((SECKILL_RESTART - SECKILL_AT))
    start_member "$victim"
    since() { awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}'; }
    # The restarted member answers once it has replayed its own log; it has
    # caught up when it is within 100 entries of the primary's applied index.
    answers=$SECKILL_TIME caught=$SECKILL_TIME
    until [ -n "$(gstatus "$victim" applied_index)" ] || ! kill -0 "$sbpid" 2>/dev/null; do sleep 0.2; done
    kill -0 "$sbpid" 2>/dev/null && answers=$(since) && echo "member $victim answers at $answers s" | tee -a "$log"
    pr=$(primary_id)
    while kill -0 "$sbpid" 2>/dev/null; do
      a=$(gstatus "$victim" applied_index); b=$(gstatus "$pr" applied_index)
      if [ -n "$a" ] && [ -n "$b" ] && [ $((b - a)) -lt 100 ]; then
        caught=$(since); echo "member $victim caught up at $caught s" | tee -a "$log"; break
      fi
      sleep 0.2
    done
    wait "$sbpid" || true
    group_converged
    echo "member $victim restarted; group converged at index $(gstatus 1 applied_index)" | tee -a "$log"
    # Windows: "[ 16s ] thds: 16 tps: 1234.00 ..."
    awk -v at="$SECKILL_AT" -v re="$SECKILL_RESTART" -v an="$answers" -v cu="$caught" '
      /^\[ *[0-9]+s \]/ { s = $2; sub(/s/, "", s); s += 0; tps = $7 + 0; w[s] = tps; if (s > last) last = s }
      END {
        for (s = 1; s <= last; s++) {
          p = (s <= at) ? "before" : (s <= re) ? "down" : (s <= an) ? "replay" : (s <= cu) ? "catchup" : "after"
          line[p] = line[p] sprintf(" %.0f", w[s]); sum[p] += w[s]; cnt[p]++
          if (!(p in mn) || w[s] < mn[p]) mn[p] = w[s]
        }
        n = split("before down replay catchup after", ph, " ")
        for (i = 1; i <= n; i++) if (cnt[ph[i]]) printf "%-7s mean %6.0f min %6.0f TPS; windows:%s\n", ph[i], sum[ph[i]] / cnt[ph[i]], mn[ph[i]], line[ph[i]]
      }' "$log" | tee -a "$log"
  done
fi
