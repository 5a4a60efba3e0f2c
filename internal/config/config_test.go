package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestDefault(t *testing.T) {
	want := Config{Datadir: "./lockstep-data", BindAddress: "127.0.0.1", Port: 3306, User: "root", Password: "",
		SyncBinlog: 1, RowImage: "full", GroupCommitWakeup: "targeted", LogCompression: true, LogCompressMin: 4096, CheckpointLogSize: 256 << 20,
		LogSegmentSize: 64 << 20, LogPreallocate: true, GCPaceTables: true, CheckpointFsyncThreshold: 8 << 20,
		CheckpointRateLimit: 128 << 20, LogSyncsInFlight: 1, SSL: true,
		ReplicaPreserveCommitOrder: true, ReplicaTransactionRetries: 10, ServerID: 1, GroupLagRetentionSize: 1 << 30}
	if got := Default(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Default() = %+v, want %+v", got, want)
	}
	if err := Default().Validate(); err != nil {
		t.Fatalf("Default().Validate() = %v", err)
	}
}

func TestSet(t *testing.T) {
	tests := []struct {
		key, value string
		want       func(*Config)
		wantErr    string
	}{
		{key: "datadir", value: "/d", want: func(c *Config) { c.Datadir = "/d" }},
		{key: "port", value: "3307", want: func(c *Config) { c.Port = 3307 }},
		{key: "port", value: " 0 ", want: func(c *Config) { c.Port = 0 }},
		{key: "bind-address", value: "::1", want: func(c *Config) { c.BindAddress = "::1" }},
		{key: "bind_address", value: "0.0.0.0", want: func(c *Config) { c.BindAddress = "0.0.0.0" }},
		{key: "BIND_Address", value: "h", want: func(c *Config) { c.BindAddress = "h" }},
		{key: "user", value: "admin", want: func(c *Config) { c.User = "admin" }},
		{key: "password", value: "", want: func(c *Config) {}},
		{key: "password", value: "s3cret", want: func(c *Config) { c.Password = "s3cret" }},
		{key: "port", value: "abc", wantErr: `invalid port "abc": not a number`},
		{key: "port", value: "65536", wantErr: "invalid port 65536: must be 0..65535"},
		{key: "port", value: "-1", wantErr: "invalid port -1"},
		{key: "port", value: "", wantErr: "not a number"},
		{key: "prot", value: "1", wantErr: `unknown option "prot"`},
		{key: "metrics-address", value: "127.0.0.1:9104", want: func(c *Config) { c.MetricsAddress = "127.0.0.1:9104" }},
		{key: "metrics_address", value: ":0", want: func(c *Config) { c.MetricsAddress = ":0" }},
		{key: "metrics-address", value: "", want: func(c *Config) {}},
		{key: "metrics-address", value: "9104", wantErr: `invalid metrics-address "9104": must be host:port`},
		{key: "metrics-address", value: "h:99999", wantErr: "port from 0 to 65535"},
		{key: "log-retention-size", value: "64M", want: func(c *Config) { c.LogRetentionSize = 64 << 20 }},
		{key: "log_retention_size", value: "0", want: func(c *Config) {}},
		{key: "log-retention-size", value: "-1", wantErr: "invalid log-retention-size"},
		{key: "checkpoint_fsync_threshold", value: "16M", want: func(c *Config) { c.CheckpointFsyncThreshold = 16 << 20 }},
		{key: "checkpoint-fsync-threshold", value: "0", want: func(c *Config) { c.CheckpointFsyncThreshold = 0 }},
		{key: "checkpoint-fsync-threshold", value: "lots", wantErr: "invalid checkpoint-fsync-threshold"},
		{key: "checkpoint-rate-limit", value: "0", want: func(c *Config) { c.CheckpointRateLimit = 0 }},
		{key: "checkpoint-rate-limit", value: "1G", want: func(c *Config) { c.CheckpointRateLimit = 1 << 30 }},
		{key: "checkpoint-rate-limit", value: "-5", wantErr: "invalid checkpoint-rate-limit"},
		{key: "log-segment-size", value: "4K", want: func(c *Config) { c.LogSegmentSize = 4 << 10 }},
		{key: "log-segment-size", value: "1000", wantErr: "must be a byte count from 4K to 1G"},
		{key: "log-segment-size", value: "2G", wantErr: "must be a byte count from 4K to 1G"},
		{key: "binlog_group_commit_sync_delay", value: "500", want: func(c *Config) { c.SyncDelayMicros = 500 }},
		{key: "binlog-group-commit-sync-delay", value: "1000001", wantErr: "must be microseconds from 0 to 1000000"},
		{key: "binlog-group-commit-sync-delay", value: "-1", wantErr: "must be microseconds from 0 to 1000000"},
		{key: "log-syncs-in-flight", value: "4", want: func(c *Config) { c.LogSyncsInFlight = 4 }},
		{key: "log_syncs_in_flight", value: "0", wantErr: "must be a count from 1 to 16"},
		{key: "log-syncs-in-flight", value: "17", wantErr: "must be a count from 1 to 16"},
		{key: "replica_parallel_workers", value: "4", want: func(c *Config) { c.ReplicaParallelWorkers = 4 }},
		{key: "replica-parallel-workers", value: "1025", wantErr: "must be a count from 0 to 1024"},
		{key: "server_id", value: "3", want: func(c *Config) { c.ServerID = 3 }},
		{key: "server-id", value: "0", wantErr: "must be a number from 1 to 4294967295"},
		{key: "group_local_address", value: "127.0.0.1:33061", want: func(c *Config) { c.GroupLocalAddress = "127.0.0.1:33061" }},
		{key: "group-local-address", value: "127.0.0.1", wantErr: "must be host:port"},
		{key: "group-seeds", value: "1=a:1, 2=b:2", want: func(c *Config) { c.GroupSeeds = map[uint64]string{1: "a:1", 2: "b:2"} }},
		{key: "group-seeds", value: "1=a:1,1=b:2", wantErr: "member 1 is named twice"},
		{key: "group-seeds", value: "a:1", wantErr: "each member must be id=host:port"},
		{key: "group-seeds", value: "1=a", wantErr: `"a" is not host:port`},
		{key: "group-bootstrap", value: "ON", want: func(c *Config) { c.GroupBootstrap = true }},
		{key: "group_name", value: "AAAAAAAA-bbbb-cccc-dddd-eeeeeeeeeeee", want: func(c *Config) { c.GroupName = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee" }},
		{key: "group-name", value: "mygroup", wantErr: "must be a UUID"},
		{key: "group-lag-retention-size", value: "64M", want: func(c *Config) { c.GroupLagRetentionSize = 64 << 20 }},
		{key: "group-lag-retention-size", value: "-1", wantErr: "invalid group-lag-retention-size"},
		{key: "replica_preserve_commit_order", value: "OFF", want: func(c *Config) { c.ReplicaPreserveCommitOrder = false }},
		{key: "replica-preserve-commit-order", value: "maybe", wantErr: "must be ON or OFF"},
		{key: "replica_transaction_retries", value: "0", want: func(c *Config) { c.ReplicaTransactionRetries = 0 }},
		{key: "replica-transaction-retries", value: "-1", wantErr: "must be a count from 0 to 2147483648"},
		{key: "binlog-group-commit-sync-no-delay-count", value: "16", want: func(c *Config) { c.SyncNoDelayCount = 16 }},
		{key: "binlog-group-commit-sync-no-delay-count", value: "x", wantErr: "must be a count from 0 to 100000"},
	}
	for _, tt := range tests {
		t.Run(tt.key+"="+tt.value, func(t *testing.T) {
			got := Default()
			err := got.Set(tt.key, tt.value)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Set error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Set: %v", err)
			}
			want := Default()
			tt.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v, want %+v", got, want)
			}
		})
	}
	var c Config
	if err := c.Set("nope", "x"); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("unknown key error %v does not wrap ErrUnknownKey", err)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		mod     func(*Config)
		wantErr string // "" = valid
	}{
		{name: "defaults", mod: func(c *Config) {}},
		{name: "port 0 picks a free port", mod: func(c *Config) { c.Port = 0 }},
		{name: "port max", mod: func(c *Config) { c.Port = 65535 }},
		{name: "port too big", mod: func(c *Config) { c.Port = 65536 }, wantErr: "invalid port"},
		{name: "port negative", mod: func(c *Config) { c.Port = -5 }, wantErr: "invalid port"},
		{name: "empty user", mod: func(c *Config) { c.User = "" }, wantErr: "user must not be empty"},
		{name: "empty datadir", mod: func(c *Config) { c.Datadir = "" }, wantErr: "datadir must not be empty"},
		{name: "blank datadir", mod: func(c *Config) { c.Datadir = "  " }, wantErr: "datadir must not be empty"},
		{name: "any ipv4", mod: func(c *Config) { c.BindAddress = "0.0.0.0" }},
		{name: "ipv6", mod: func(c *Config) { c.BindAddress = "::" }},
		{name: "ipv6 brackets", mod: func(c *Config) { c.BindAddress = "[::1]" }},
		{name: "localhost", mod: func(c *Config) { c.BindAddress = "localhost" }},
		{name: "hostname", mod: func(c *Config) { c.BindAddress = "db-1.example.com" }},
		{name: "empty bind", mod: func(c *Config) { c.BindAddress = "" }, wantErr: "bind-address must not be empty"},
		{name: "bad ipv4", mod: func(c *Config) { c.BindAddress = "127.0.0.300" }, wantErr: "invalid bind-address"},
		{name: "with port", mod: func(c *Config) { c.BindAddress = "127.0.0.1:3306" }, wantErr: "invalid bind-address"},
		{name: "space", mod: func(c *Config) { c.BindAddress = "my host" }, wantErr: "invalid bind-address"},
		{name: "leading hyphen", mod: func(c *Config) { c.BindAddress = "-host" }, wantErr: "invalid bind-address"},
		{name: "star", mod: func(c *Config) { c.BindAddress = "*" }, wantErr: "invalid bind-address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			tt.mod(&c)
			err := c.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want error containing %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
		})
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		want    func(*Config)
		wantErr string // substring; "" = no error
	}{
		{name: "empty", file: "", want: func(c *Config) {}},
		{name: "comments only", file: "# a\n; b\n\n   # c\n", want: func(c *Config) {}},
		{
			name: "no section, both spacings",
			file: "datadir = /var/lib/ls\nport=3307\nbind-address =0.0.0.0\nuser= admin\npassword = pw\n",
			want: func(c *Config) {
				c.Datadir, c.Port, c.BindAddress, c.User, c.Password = "/var/lib/ls", 3307, "0.0.0.0", "admin", "pw"
			},
		},
		{
			name: "accepted sections",
			file: "[lockstep]\nport=1\n[mysqld]\nuser=a\n[server]\ndatadir=/x\n",
			want: func(c *Config) { c.Port, c.User, c.Datadir = 1, "a", "/x" },
		},
		{
			name: "section names are case-insensitive",
			file: "[LockStep]\nport=9\n",
			want: func(c *Config) { c.Port = 9 },
		},
		{
			name: "other sections are skipped, even unknown keys",
			file: "[client]\nport=1\nsocket=/tmp/s\n[mysqld]\nport=2\n[mysql]\nno-auto-rehash\n",
			want: func(c *Config) { c.Port = 2 },
		},
		{name: "underscore for hyphen", file: "bind_address=::1\n", want: func(c *Config) { c.BindAddress = "::1" }},
		{name: "upper case key", file: "PORT=4\n", want: func(c *Config) { c.Port = 4 }},
		{name: "double quotes", file: `datadir = "/my data"` + "\n", want: func(c *Config) { c.Datadir = "/my data" }},
		{name: "single quotes", file: "password='a b'\n", want: func(c *Config) { c.Password = "a b" }},
		{name: "hash inside quotes", file: "password = 'p#ss' # comment\n", want: func(c *Config) { c.Password = "p#ss" }},
		{name: "other quote inside quotes", file: `password = "it's"` + "\n", want: func(c *Config) { c.Password = "it's" }},
		{name: "trailing comment", file: "port = 3310 # the port\n", want: func(c *Config) { c.Port = 3310 }},
		{name: "semicolon inside value", file: "password = a;b\n", want: func(c *Config) { c.Password = "a;b" }},
		{name: "empty value", file: "password =\n", want: func(c *Config) { c.Password = "" }},
		{name: "empty quoted value", file: "password = ''\n", want: func(c *Config) { c.Password = "" }},
		{name: "value with equals", file: "password = a=b\n", want: func(c *Config) { c.Password = "a=b" }},
		{name: "last wins", file: "port=1\nport=2\n", want: func(c *Config) { c.Port = 2 }},
		{name: "crlf line endings", file: "port=5\r\nuser=u\r\n", want: func(c *Config) { c.Port, c.User = 5, "u" }},
		{name: "byte order mark", file: "\ufeffport=6\n", want: func(c *Config) { c.Port = 6 }},
		{name: "loose prefix unknown is ignored", file: "loose-innodb_buffer_pool_size=1G\n", want: func(c *Config) {}},
		{name: "loose prefix known is applied", file: "loose_port=7\n", want: func(c *Config) { c.Port = 7 }},
		{name: "unknown key", file: "# hi\n\nprot = 3306\n", wantErr: `test.cnf:3: unknown option "prot"`},
		{name: "unknown key in mysqld", file: "[mysqld]\nsocket=/tmp/s\n", wantErr: `test.cnf:2: unknown option "socket"`},
		{name: "bad port", file: "port = abc\n", wantErr: `test.cnf:1: invalid port "abc": not a number`},
		{name: "port out of range", file: "\nport = 70000\n", wantErr: "test.cnf:2: invalid port 70000"},
		{name: "missing value", file: "datadir\n", wantErr: `test.cnf:1: option "datadir" needs a value`},
		{name: "unterminated quote", file: "password = 'abc\n", wantErr: "test.cnf:1: unterminated ' quote"},
		{name: "text after quotes", file: "password = 'a' b\n", wantErr: `test.cnf:1: option "password": unexpected text "b" after quoted value`},
		{name: "bad section", file: "[lockstep\n", wantErr: "test.cnf:1: malformed section header"},
		{name: "empty section", file: "[ ]\n", wantErr: "test.cnf:1: empty section name"},
		{name: "include", file: "!include /etc/other.cnf\n", wantErr: `test.cnf:1: "!include" is not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Default()
			err := Parse(strings.NewReader(tt.file), "test.cnf", &got)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse error = %v, want one containing %q", err, tt.wantErr)
				}
				if !reflect.DeepEqual(got, Default()) {
					t.Fatalf("config changed on error: %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			want := Default()
			tt.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "lockstep.cnf")
	if err := os.WriteFile(path, []byte("[lockstep]\nport = 4000\nuser = bob\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := Default()
	c.Password = "kept" // a field the file does not set keeps its value
	if err := LoadFile(path, &c); err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Port, want.User, want.Password = 4000, "bob", "kept"
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got %+v, want %+v", c, want)
	}

	bad := filepath.Join(dir, "bad.cnf")
	if err := os.WriteFile(bad, []byte("port=1\nfoo=bar\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := LoadFile(bad, &c)
	if err == nil || err.Error() != bad+`:2: unknown option "foo"` {
		t.Fatalf("LoadFile(bad) = %v", err)
	}

	missing := filepath.Join(dir, "missing.cnf")
	err = LoadFile(missing, &c)
	if err == nil || err.Error() != "config file "+missing+": no such file or directory" {
		t.Fatalf("LoadFile(missing) = %v", err)
	}
}

func TestPrepareDatadir(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(base, "existing")
	if err := os.Mkdir(existing, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(existing, "keep"), []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		path    string
		wantErr string
	}{
		{name: "created when missing", path: filepath.Join(base, "new", "nested")},
		{name: "existing directory", path: existing},
		{name: "regular file", path: file, wantErr: "datadir " + file + ": exists and is not a directory"},
		{name: "parent is a file", path: filepath.Join(file, "sub"), wantErr: "datadir " + filepath.Join(file, "sub") + ": cannot create: a parent is not a directory"},
		{name: "empty", path: "", wantErr: "datadir must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := PrepareDatadir(tt.path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("PrepareDatadir = %v, want error containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("error is not one line: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("PrepareDatadir = %v", err)
			}
			fi, err := os.Stat(tt.path)
			if err != nil || !fi.IsDir() {
				t.Fatalf("not a directory afterwards: %v", err)
			}
			entries, _ := os.ReadDir(tt.path)
			for _, e := range entries {
				if strings.Contains(e.Name(), "probe") {
					t.Fatalf("probe file %s left behind", e.Name())
				}
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(existing, "keep")); err != nil || string(b) != "data" {
		t.Fatalf("existing content disturbed: %q %v", b, err)
	}

	t.Run("read-only directory", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root can write to read-only directories")
		}
		ro := filepath.Join(base, "ro")
		if err := os.Mkdir(ro, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(ro, 0o700) })
		err := PrepareDatadir(ro)
		if err == nil || !strings.Contains(err.Error(), "datadir "+ro+": not writable: permission denied") {
			t.Fatalf("PrepareDatadir(read-only) = %v", err)
		}
	})
}

// TestCheckGroup: the group options are checked together.
func TestCheckGroup(t *testing.T) {
	tests := []struct {
		name    string
		set     map[string]string
		wantErr string
	}{
		{name: "standalone", set: map[string]string{}},
		{name: "member", set: map[string]string{"server-id": "2", "group-local-address": "h:1", "group-seeds": "1=h:0,2=h:1"}},
		{name: "no seeds", set: map[string]string{"group-local-address": "h:1"}, wantErr: "needs group-seeds"},
		{name: "not among seeds", set: map[string]string{"server-id": "3", "group-local-address": "h:1", "group-seeds": "1=h:0,2=h:1"}, wantErr: "does not name this server's server-id 3"},
		{name: "seeds alone", set: map[string]string{"group-seeds": "1=h:0"}, wantErr: "need group-local-address"},
		{name: "name alone", set: map[string]string{"group-name": "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"}, wantErr: "need group-local-address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			for k, v := range tt.set {
				if err := c.Set(k, v); err != nil {
					t.Fatal(err)
				}
			}
			err := c.Validate()
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
