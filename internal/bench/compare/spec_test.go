package compare

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	ok := []struct {
		in   string
		want Spec
	}{
		{"a=dsn:root@tcp(127.0.0.1:3306)/", Spec{Name: "a", Kind: DSN, DSN: "root@tcp(127.0.0.1:3306)/"}},
		{"remote=dsn:u:p@tcp(10.0.0.1:3306)/db", Spec{Name: "remote", Kind: DSN, DSN: "u:p@tcp(10.0.0.1:3306)/db"}},
		{"new=lockstep:/tmp/ls", Spec{Name: "new", Kind: Lockstep, Binary: "/tmp/ls"}},
		{"sync0=lockstep:./lockstep:--sync-binlog=0  --log-preallocate=off", Spec{Name: "sync0", Kind: Lockstep, Binary: "./lockstep",
			Args: []string{"--sync-binlog=0", "--log-preallocate=off"}}},
		{"nofast=lockstep:/tmp/ls:@lockstep_fast_path=OFF --sync-binlog=0 @binlog_group_commit_sync_delay=200", Spec{Name: "nofast", Kind: Lockstep, Binary: "/tmp/ls",
			Args: []string{"--sync-binlog=0"}, Globals: []string{"lockstep_fast_path=OFF", "binlog_group_commit_sync_delay=200"}}},
		{"m.1=mariadb", Spec{Name: "m.1", Kind: MariaDB}},
		{"m_2=mariadb:innodb_buffer_pool_size=1G sync_binlog=0", Spec{Name: "m_2", Kind: MariaDB,
			Args: []string{"innodb_buffer_pool_size=1G", "sync_binlog=0"}}},
	}
	for _, c := range ok {
		got, err := ParseSpec(c.in)
		if err != nil {
			t.Errorf("ParseSpec(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseSpec(%q) = %#v, want %#v", c.in, got, c.want)
		}
		if back, err := ParseSpec(got.String()); err != nil || !reflect.DeepEqual(back, got) {
			t.Errorf("ParseSpec(%q.String() = %q) = %#v, %v", c.in, got.String(), back, err)
		}
	}
	bad := []struct{ in, msg string }{
		{"lockstep:/tmp/ls", "want NAME="},
		{"=mariadb", "name"},
		{"a b=mariadb", "name"},
		{"a/b=mariadb", "name"},
		{"a=postgres:x", "unknown kind"},
		{"a=dsn", "needs a DSN"},
		{"a=dsn:", "needs a DSN"},
		{"a=lockstep", "binary"},
		{"a=lockstep:", "binary"},
		{"a=lockstep:/tmp/ls:--port 3306", "--port is chosen"},
		{"a=lockstep:/tmp/ls:--datadir=/x", "--datadir is chosen"},
		{"a=lockstep:/tmp/ls:@x", "want @VARIABLE=VALUE"},
		{"a=lockstep:/tmp/ls:@x=1;DROP", "want @VARIABLE=VALUE"},
		{"a=lockstep:/tmp/ls:@x='a'", "want @VARIABLE=VALUE"},
		{"a=mariadb:port=3306", "port is chosen"},
		{"a=mariadb:pid-file=/x", "pid-file is chosen"},
	}
	for _, c := range bad {
		_, err := ParseSpec(c.in)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("ParseSpec(%q) = %v, want an error with %q", c.in, err, c.msg)
		}
	}
}

func TestParseSpecs(t *testing.T) {
	if _, err := ParseSpecs([]string{"a=mariadb"}); err == nil || !strings.Contains(err.Error(), "two or more") {
		t.Errorf("one target: %v", err)
	}
	if _, err := ParseSpecs([]string{"a=mariadb", "a=lockstep:/x"}); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("same name twice: %v", err)
	}
	ss, err := ParseSpecs([]string{"b=lockstep:/x", "a=mariadb", "c=dsn:root@tcp(h:1)/"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range ss {
		names = append(names, s.Name)
	}
	if !reflect.DeepEqual(names, []string{"b", "a", "c"}) {
		t.Errorf("names %v: the order given must be kept (the first is the ratios' base)", names)
	}
}

func TestMariaDBConfig(t *testing.T) {
	c := mariadbConfig("/d", 4000, []string{"innodb_buffer_pool_size=1G"})
	for _, want := range []string{"port=4000\n", "innodb_flush_log_at_trx_commit=1\n", "sync_binlog=1\n", "log-bin=/d/binlog\n",
		"binlog_format=ROW\n", "datadir=/d/data\n", "bind-address=127.0.0.1\n"} {
		if !strings.Contains(c, want) {
			t.Errorf("my.cnf lacks %q:\n%s", want, c)
		}
	}
	if !strings.HasSuffix(c, "innodb_buffer_pool_size=1G\n") {
		t.Errorf("extra settings must come last (they override):\n%s", c)
	}
}
