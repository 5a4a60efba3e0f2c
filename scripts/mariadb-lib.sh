# start_mariadb, sourced by scripts/bench-tpcc.sh, bench-tpcc-pairs.sh, bench-group.sh and
# bench-durability-cost.sh; not run on its own (lockstep bench compare starts its own MariaDB).
#
# start_mariadb DIR PORT BINLOG USER PASSWORD [EXTRA]: a fresh MariaDB 10.11 in DIR
# (data in DIR/mdb, socket DIR/mdb.sock) on 127.0.0.1:PORT with
# innodb_flush_log_at_trx_commit=1 and, with BINLOG=1, the binary log (ROW)
# with sync_binlog=1 — lockstep's durability; waits until it answers and
# creates USER@127.0.0.1 with every privilege. EXTRA (lines) is added to
# the [mysqld] section, after everything else. Stop it with
# `mariadb-admin -S DIR/mdb.sock -uroot shutdown`.
start_mariadb() {
  local dir=$1 port=$2 binlog=$3 user=$4 password=$5 extra=${6:-}
  mkdir -p "$dir/mdb"
  cat > "$dir/mdb.cnf" <<CNF
[mysqld]
user=root
datadir=$dir/mdb
socket=$dir/mdb.sock
pid-file=$dir/mdb.pid
log-error=$dir/mdb.err
port=$port
bind-address=127.0.0.1
skip-name-resolve
max_connections=512
innodb_flush_log_at_trx_commit=1
innodb_buffer_pool_size=2G
CNF
  if [ "$binlog" = 1 ]; then
    printf 'log-bin=%s\nbinlog_format=ROW\nsync_binlog=1\nserver_id=1\n' "$dir/mdb-binlog" >> "$dir/mdb.cnf"
  fi
  [ -z "$extra" ] || printf '%s\n' "$extra" >> "$dir/mdb.cnf"
  mariadb-install-db --no-defaults --datadir="$dir/mdb" --user=root > "$dir/mdb-install.log" 2>&1
  mariadbd --defaults-file="$dir/mdb.cnf" > "$dir/mdb.stdout" 2>&1 &
  for _ in $(seq 1 60); do mariadb-admin -S "$dir/mdb.sock" -uroot ping >/dev/null 2>&1 && break; sleep 0.5; done
  mariadb -S "$dir/mdb.sock" -uroot -e "CREATE USER '$user'@'127.0.0.1' IDENTIFIED BY '$password';
    GRANT ALL PRIVILEGES ON *.* TO '$user'@'127.0.0.1';"
}
