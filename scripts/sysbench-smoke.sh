#!/usr/bin/env bash
# Short sysbench smoke test of a lockstep server.
#
# Builds lockstep (or uses $LOCKSTEP_BIN), starts `lockstep serve` on a free port
# of 127.0.0.1 with a temporary datadir, creates database sbtest, and for each
# --db-ps-mode (auto, disable): prepares the tables once, runs every workload
# for a few seconds, and cleans up. One summary line is printed per run.
#
# It fails (exit 1) if sysbench exits non-zero or reports an error that it does
# not ignore, if the server dies, or if the server does not shut down cleanly on
# SIGTERM at the end. sysbench 1.0.20 retries and counts as "ignored errors" the
# codes in --mysql-ignore-errors, by default 1213 (deadlock), 1205 (lock wait
# timeout) and 1020 (record changed); ignored errors are reported, not failed
# on. Any other error makes sysbench print "FATAL: ..." and stop the thread.
#
# Knobs (environment):
#   SMOKE_TIME=5            seconds per run
#   SMOKE_THREADS=16        sysbench --threads
#   SMOKE_ROWS=10000        --table-size
#   SMOKE_TABLES=1          --tables (select_random_* always use sbtest1)
#   SMOKE_WORKLOADS="..."   space-separated subset of the workloads below
#   SMOKE_PS_MODES="auto disable"
#   SMOKE_IGNORE_ERRORS=    if set, passed as --mysql-ignore-errors (e.g. 1213,1205,1062)
#   SMOKE_KEEP=1            keep the work dir (logs, datadir) afterwards
#   LOCKSTEP_BIN=path       use this binary instead of building ./cmd/lockstep
#
# Without sysbench or a mysql/mariadb client it prints a message and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."

SMOKE_TIME=${SMOKE_TIME:-5}
SMOKE_THREADS=${SMOKE_THREADS:-16}
SMOKE_ROWS=${SMOKE_ROWS:-10000}
SMOKE_TABLES=${SMOKE_TABLES:-1}
SMOKE_WORKLOADS=${SMOKE_WORKLOADS:-"oltp_read_write oltp_read_only oltp_write_only oltp_point_select oltp_update_index oltp_update_non_index oltp_delete oltp_insert select_random_points select_random_ranges"}
SMOKE_PS_MODES=${SMOKE_PS_MODES:-"auto disable"}
SMOKE_IGNORE_ERRORS=${SMOKE_IGNORE_ERRORS:-}
SMOKE_KEEP=${SMOKE_KEEP:-}

say() { echo "sysbench-smoke: $*"; }

if ! command -v sysbench >/dev/null; then
	say "skipped: sysbench is not installed (apt-get install sysbench)"
	exit 0
fi
MYSQL=$(command -v mysql || command -v mariadb || true)
if [ -z "$MYSQL" ]; then
	say "skipped: no mysql client (apt-get install mariadb-client)"
	exit 0
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/lockstep-smoke.XXXXXX")
SERVER_PID=""
PORT=""

stop_server() { # returns the server's exit status (or 1 if it had to be killed)
	local pid=$SERVER_PID rc=0
	[ -n "$pid" ] || return 0
	SERVER_PID=""
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		if kill -0 "$pid" 2>/dev/null; then
			say "server (pid $pid) still running 10 s after SIGTERM; killing it"
			kill -KILL "$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
			return 1
		fi
	fi
	wait "$pid" 2>/dev/null || rc=$?
	return "$rc"
}

on_exit() {
	local rc=$?
	stop_server || true
	if [ -n "$SMOKE_KEEP" ]; then
		say "work dir kept: $WORK"
	else
		rm -rf "$WORK"
	fi
	exit "$rc"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

server_log_tail() {
	say "--- last lines of the server log ---"
	tail -n 30 "$WORK/server.log" 2>/dev/null | sed 's/^/    /' || true
}

# --- build ---
if [ -n "${LOCKSTEP_BIN:-}" ]; then
	BIN=$LOCKSTEP_BIN
else
	BIN=$WORK/lockstep
	go build -o "$BIN" ./cmd/lockstep
fi

# --- start the server on a free port ---
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start_server() {
	local attempt port addr
	for attempt in 1 2 3 4 5; do
		port=$((20000 + RANDOM % 40000))
		port_in_use "$port" && continue
		"$BIN" serve --datadir "$WORK/data" --port "$port" --bind-address 127.0.0.1 >"$WORK/server.log" 2>&1 &
		SERVER_PID=$!
		for _ in $(seq 1 600); do # up to 60 s
			if grep -q "ready for connections on" "$WORK/server.log"; then
				addr=$(sed -n 's/.*ready for connections on \([^ ]*\) (datadir.*/\1/p' "$WORK/server.log" | head -n 1)
				PORT=${addr##*:}
				[ -n "$PORT" ] || PORT=$port
				return 0
			fi
			kill -0 "$SERVER_PID" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$SERVER_PID" 2>/dev/null; then
			say "server did not report ready within 60 s"
			server_log_tail
			return 1
		fi
		wait "$SERVER_PID" 2>/dev/null || true
		SERVER_PID=""
		if grep -q "address already in use" "$WORK/server.log"; then
			continue # someone took the port meanwhile; try another
		fi
		say "server exited before it was ready"
		server_log_tail
		return 1
	done
	say "no free port found"
	return 1
}

start_server
say "server pid $SERVER_PID on 127.0.0.1:$PORT ($("$BIN" version 2>/dev/null || echo "version unknown"))"

mysql_cli() { "$MYSQL" -h127.0.0.1 -P"$PORT" -uroot --connect-timeout=10 "$@"; }
ok=0
for _ in $(seq 1 50); do
	if mysql_cli -e 'SELECT 1' >/dev/null 2>&1; then ok=1; break; fi
	sleep 0.2
done
if [ "$ok" != 1 ]; then
	say "cannot run SELECT 1 with $MYSQL:"
	mysql_cli -e 'SELECT 1' || true
	server_log_tail
	exit 1
fi
mysql_cli -e 'CREATE DATABASE sbtest'

# --- runs ---
SB_COMMON=(
	--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$PORT"
	--mysql-user=root --mysql-password= --mysql-db=sbtest
	--tables="$SMOKE_TABLES" --table-size="$SMOKE_ROWS"
)
if [ -n "$SMOKE_IGNORE_ERRORS" ]; then
	SB_COMMON+=(--mysql-ignore-errors="$SMOKE_IGNORE_ERRORS")
fi

# parse_log LOG -> "tps qps p95 ignored errors"; errors counts FATAL lines plus
# any "errors: N" statistics line (sysbench 1.0.20 prints only "ignored errors").
parse_log() {
	awk '
		/^[[:space:]]*transactions:/   { t = $3; gsub(/[(]/, "", t); tps = t }
		/^[[:space:]]*queries:/        { q = $3; gsub(/[(]/, "", q); qps = q }
		/^[[:space:]]*95th percentile:/ { p95 = $3 }
		/^[[:space:]]*ignored errors:/ { ign = $3 }
		/^[[:space:]]*errors:/         { err += $2 }
		/^FATAL/                       { err++ }
		END {
			printf "%s %s %s %s %d\n", (tps == "" ? "-" : tps), (qps == "" ? "-" : qps),
				(p95 == "" ? "-" : p95), (ign == "" ? "-" : ign), err
		}' "$1"
}

failures=0
summary=()
fail_run() { # NAME LOG REASON
	failures=$((failures + 1))
	say "FAILED: $1: $3; log $2:"
	grep -E '^(FATAL|ALERT|WARNING)' "$2" | head -n 10 | sed 's/^/    /' || true
	tail -n 15 "$2" | sed 's/^/    /'
}

server_alive() {
	if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then return 0; fi
	say "the server is gone"
	server_log_tail
	return 1
}

printf -v hdr '%-22s %-7s %10s %10s %9s %6s %7s  %s' workload ps-mode tps qps p95_ms errors ignored result
echo "$hdr"
for mode in $SMOKE_PS_MODES; do
	log=$WORK/prepare-$mode.log
	rc=0
	timeout 300 sysbench oltp_common "${SB_COMMON[@]}" --db-ps-mode="$mode" prepare >"$log" 2>&1 || rc=$?
	if [ "$rc" != 0 ]; then
		fail_run "prepare ($mode)" "$log" "sysbench exit $rc"
		server_alive || break
		continue
	fi
	for wl in $SMOKE_WORKLOADS; do
		log=$WORK/$wl-$mode.log
		rc=0
		timeout $((SMOKE_TIME + 120)) sysbench "$wl" "${SB_COMMON[@]}" --db-ps-mode="$mode" \
			--threads="$SMOKE_THREADS" --time="$SMOKE_TIME" --report-interval=0 run >"$log" 2>&1 || rc=$?
		read -r tps qps p95 ign errs < <(parse_log "$log")
		result=ok
		if [ "$rc" != 0 ]; then
			result="FAIL(exit $rc)"
		elif [ "$errs" != 0 ]; then
			result="FAIL(errors)"
		elif [ "$tps" = - ]; then
			result="FAIL(no statistics)"
		fi
		printf -v line '%-22s %-7s %10s %10s %9s %6s %7s  %s' "$wl" "$mode" "$tps" "$qps" "$p95" "$errs" "$ign" "$result"
		echo "$line"
		summary+=("$line")
		if [ "$result" != ok ]; then
			fail_run "$wl ($mode)" "$log" "$result"
			server_alive || break 2
		fi
	done
	log=$WORK/cleanup-$mode.log
	rc=0
	timeout 300 sysbench oltp_common "${SB_COMMON[@]}" cleanup >"$log" 2>&1 || rc=$?
	if [ "$rc" != 0 ]; then
		fail_run "cleanup ($mode)" "$log" "sysbench exit $rc"
		server_alive || break
	fi
done

# A clean shutdown on SIGTERM is part of the contract.
if [ -n "$SERVER_PID" ]; then
	rc=0
	stop_server || rc=$?
	if [ "$rc" != 0 ]; then
		say "FAILED: server exit status $rc after SIGTERM (want 0)"
		server_log_tail
		failures=$((failures + 1))
	fi
fi

if [ "$failures" != 0 ]; then
	say "$failures failure(s); summary:"
	printf '%s\n' "$hdr" "${summary[@]}"
	exit 1
fi
say "all ${#summary[@]} runs passed"
