package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"lockstep/internal/config"
)

// buildBinary compiles this command into dir, with extra go build args.
func buildBinary(t *testing.T, dir string, args ...string) string {
	t.Helper()
	bin := filepath.Join(dir, "lockstep")
	cmd := exec.Command("go", append(append([]string{"build", "-o", bin}, args...), ".")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func runBinary(t *testing.T, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("running %s: %v", bin, err)
	}
	return out.String(), errb.String(), code
}

// TestBinary runs the built binary on command lines that must fail before a
// server is started, or print without one; it needs no working server.
func TestBinary(t *testing.T) {
	tmp := t.TempDir()
	bin := buildBinary(t, tmp)
	regular := filepath.Join(tmp, "plainfile")
	if err := os.WriteFile(regular, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	badCnf := filepath.Join(tmp, "bad.cnf")
	if err := os.WriteFile(badCnf, []byte("[lockstep]\nport = 3307\nprot = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	datadir := filepath.Join(tmp, "data")

	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string // exact, when set
		stderrHas  string // substring of the one stderr line
		stdoutHas  string
	}{
		{name: "unknown flag", args: []string{"serve", "--prot", "3306"}, wantCode: 2,
			wantStderr: "lockstep: unknown flag: --prot\n"},
		{name: "unknown root flag", args: []string{"--prot"}, wantCode: 2,
			wantStderr: "lockstep: unknown flag: --prot\n"},
		{name: "unknown shorthand", args: []string{"serve", "-x"}, wantCode: 2, stderrHas: "unknown shorthand flag: 'x'"},
		{name: "missing flag value", args: []string{"serve", "--port"}, wantCode: 2,
			wantStderr: "lockstep: flag needs an argument: --port\n"},
		{name: "port not a number", args: []string{"serve", "--datadir", datadir, "--port", "abc"}, wantCode: 2,
			wantStderr: "lockstep: --port: invalid port \"abc\": not a number\n"},
		{name: "port out of range", args: []string{"serve", "--datadir", datadir, "--port=70000"}, wantCode: 2,
			wantStderr: "lockstep: --port: invalid port 70000: must be 0..65535\n"},
		{name: "bad bind address", args: []string{"serve", "--datadir", datadir, "--bind-address", "1.2.3.400"}, wantCode: 2,
			stderrHas: `invalid bind-address "1.2.3.400"`},
		{name: "empty user", args: []string{"serve", "--datadir", datadir, "--user", ""}, wantCode: 2,
			stderrHas: "user must not be empty"},
		{name: "datadir is a regular file", args: []string{"serve", "--datadir", regular}, wantCode: 2,
			wantStderr: "lockstep: datadir " + regular + ": exists and is not a directory\n"},
		{name: "datadir under a regular file", args: []string{"serve", "--datadir", filepath.Join(regular, "d")}, wantCode: 2,
			stderrHas: "datadir " + filepath.Join(regular, "d") + ": cannot create"},
		{name: "config unknown option", args: []string{"serve", "--config", badCnf}, wantCode: 2,
			wantStderr: "lockstep: " + badCnf + ":3: unknown option \"prot\"\n"},
		{name: "config missing", args: []string{"serve", "--config", filepath.Join(tmp, "nope.cnf")}, wantCode: 2,
			stderrHas: "no such file or directory"},
		{name: "unknown command", args: []string{"serv"}, wantCode: 2,
			wantStderr: "lockstep: unknown command \"serv\" (did you mean \"serve\"?); see 'lockstep --help'\n"},
		{name: "unknown command no suggestion", args: []string{"frobnicate"}, wantCode: 2, stderrHas: `unknown command "frobnicate"`},
		{name: "serve extra argument", args: []string{"serve", "now"}, wantCode: 2, stderrHas: `unknown command "now"`},
		{name: "version", args: []string{"version"}, wantCode: 0, wantStderr: "", stdoutHas: "lockstep " + Version + "\n"},
		{name: "--version", args: []string{"--version"}, wantCode: 0, wantStderr: "", stdoutHas: "lockstep " + Version + "\n"},
		{name: "help", args: []string{"--help"}, wantCode: 0, wantStderr: "", stdoutHas: "serve"},
		{name: "no command prints help", args: nil, wantCode: 0, wantStderr: "", stdoutHas: "Available Commands"},
		{name: "serve help", args: []string{"serve", "--help"}, wantCode: 0, wantStderr: "", stdoutHas: "--bind-address"},
		{name: "help serve", args: []string{"help", "serve"}, wantCode: 0, wantStderr: "", stdoutHas: "--config file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runBinary(t, bin, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tt.wantCode, stderr)
			}
			if tt.wantCode != 0 {
				if stdout != "" {
					t.Errorf("stdout %q, want nothing", stdout)
				}
				if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "lockstep: ") {
					t.Errorf("stderr is not one \"lockstep: \" line: %q", stderr)
				}
			}
			if tt.wantStderr != "" || tt.wantCode == 0 {
				if stderr != tt.wantStderr {
					t.Errorf("stderr %q, want %q", stderr, tt.wantStderr)
				}
			}
			if !strings.Contains(stderr, tt.stderrHas) {
				t.Errorf("stderr %q does not contain %q", stderr, tt.stderrHas)
			}
			if !strings.Contains(stdout, tt.stdoutHas) {
				t.Errorf("stdout %q does not contain %q", stdout, tt.stdoutHas)
			}
		})
	}
	if _, err := os.Stat(regular); err != nil {
		t.Fatalf("the regular file was disturbed: %v", err)
	}
}

func TestVersionLdflags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary again")
	}
	bin := buildBinary(t, t.TempDir(), "-ldflags", "-X main.Version=9.8.7-test")
	stdout, _, code := runBinary(t, bin, "version")
	if code != 0 || stdout != "lockstep 9.8.7-test\n" {
		t.Fatalf("version = %q, exit %d", stdout, code)
	}
}

// stubServer replaces server.Run for one test.
func stubServer(t *testing.T, fn func(ctx context.Context, cfg config.Config, ready func(string)) error) {
	t.Helper()
	old := runServer
	runServer = fn
	t.Cleanup(func() { runServer = old })
}

// TestPrecedence checks defaults < option file < flags, in process.
func TestPrecedence(t *testing.T) {
	tmp := t.TempDir()
	cnf := filepath.Join(tmp, "ls.cnf")
	fileDir := filepath.Join(tmp, "from-file")
	flagDir := filepath.Join(tmp, "from-flag")
	body := "[client]\nport = 1\n[lockstep]\ndatadir = " + fileDir + "\nport = 4000\nuser = fileuser\n"
	if err := os.WriteFile(cnf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(tmp) // the default datadir ./lockstep-data is created here

	// durable fills in the durability options' defaults.
	durable := func(c config.Config) config.Config {
		d := config.Default()
		c.SyncBinlog, c.RowImage, c.GroupCommitWakeup = d.SyncBinlog, d.RowImage, d.GroupCommitWakeup
		c.LogCompression, c.LogCompressMin, c.CheckpointLogSize = d.LogCompression, d.LogCompressMin, d.CheckpointLogSize
		c.LogSegmentSize, c.LogPreallocate, c.CheckpointFsyncThreshold = d.LogSegmentSize, d.LogPreallocate, d.CheckpointFsyncThreshold
		c.CheckpointRateLimit, c.SSL, c.LogSyncsInFlight = d.CheckpointRateLimit, d.SSL, d.LogSyncsInFlight
		c.ServerID = d.ServerID
		c.ReplicaPreserveCommitOrder, c.ReplicaTransactionRetries = d.ReplicaPreserveCommitOrder, d.ReplicaTransactionRetries
		c.GroupLagRetentionSize, c.GCPaceTables = d.GroupLagRetentionSize, d.GCPaceTables
		return c
	}
	tests := []struct {
		name string
		args []string
		want config.Config
	}{
		{name: "defaults", args: nil,
			want: durable(config.Config{Datadir: filepath.Join(tmp, "lockstep-data"), BindAddress: "127.0.0.1", Port: 3306, User: "root"})},
		{name: "file over defaults", args: []string{"--config", cnf},
			want: durable(config.Config{Datadir: fileDir, BindAddress: "127.0.0.1", Port: 4000, User: "fileuser"})},
		{name: "flags over file", args: []string{"--config", cnf, "--port", "5000", "--datadir", flagDir, "--password", "pw"},
			want: durable(config.Config{Datadir: flagDir, BindAddress: "127.0.0.1", Port: 5000, User: "fileuser", Password: "pw"})},
		{name: "flag order does not matter", args: []string{"--port=0", "--config=" + cnf, "--bind-address", "::1"},
			want: durable(config.Config{Datadir: fileDir, BindAddress: "::1", Port: 0, User: "fileuser"})},
		{name: "relative datadir is made absolute", args: []string{"--datadir", "rel/dir"},
			want: durable(config.Config{Datadir: filepath.Join(tmp, "rel", "dir"), BindAddress: "127.0.0.1", Port: 3306, User: "root"})},
		{name: "durability flags", args: []string{"--sync-binlog", "0", "--recover-truncate", "--binlog-row-image=MINIMAL",
			"--group-commit-wakeup", "broadcast", "--log-compression=OFF", "--log-compression-threshold", "100",
			"--log-retention-size", "1G", "--log-segment-size=16M", "--log-preallocate=OFF", "--gc-pace-tables=OFF",
			"--binlog-group-commit-sync-delay", "250", "--binlog_group_commit_sync_no_delay_count=8", "--ssl=OFF", "--log_syncs_in_flight=3",
			"--checkpoint-fsync-threshold", "0", "--checkpoint_rate_limit=64M",
			"--replica-preserve-commit-order=OFF", "--replica_transaction_retries", "3"},
			want: config.Config{Datadir: filepath.Join(tmp, "lockstep-data"), BindAddress: "127.0.0.1", Port: 3306, User: "root",
				SyncBinlog: 0, RecoverTruncate: true, RowImage: "minimal", GroupCommitWakeup: "broadcast", LogCompression: false, LogCompressMin: 100,
				CheckpointLogSize: 256 << 20, LogRetentionSize: 1 << 30, LogSegmentSize: 16 << 20,
				SyncDelayMicros: 250, SyncNoDelayCount: 8, LogSyncsInFlight: 3, SSL: false, CheckpointRateLimit: 64 << 20,
				ReplicaPreserveCommitOrder: false, ReplicaTransactionRetries: 3, ServerID: 1, GroupLagRetentionSize: 1 << 30}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got config.Config
			stubServer(t, func(_ context.Context, cfg config.Config, _ func(string)) error {
				got = cfg
				return nil
			})
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"serve"}, tt.args...), &stdout, &stderr)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("config\n got %+v\nwant %+v", got, tt.want)
			}
			if fi, err := os.Stat(got.Datadir); err != nil || !fi.IsDir() {
				t.Fatalf("datadir not created: %v", err)
			}
		})
	}
}

func TestServeReadyAndRuntimeError(t *testing.T) {
	datadir := t.TempDir()
	stubServer(t, func(_ context.Context, _ config.Config, ready func(string)) error {
		ready("127.0.0.1:3306")
		ready("127.0.0.1:3306") // printed once only
		return errors.New("listen tcp 127.0.0.1:3306: bind: address already in use")
	})
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"serve", "--datadir", datadir}, &stdout, &stderr)
	want := "lockstep: ready for connections on 127.0.0.1:3306 (datadir " + datadir + ")\n" +
		"lockstep: listen tcp 127.0.0.1:3306: bind: address already in use\n"
	if code != 1 || stderr.String() != want {
		t.Fatalf("exit %d, stderr %q; want 1, %q", code, stderr.String(), want)
	}
}

// TestServeSignal sends SIGTERM to the test process while serve runs (its
// handler is installed before the server starts) and expects a clean exit.
func TestServeSignal(t *testing.T) {
	started := make(chan struct{})
	stubServer(t, func(ctx context.Context, _ config.Config, ready func(string)) error {
		ready("127.0.0.1:1")
		close(started)
		<-ctx.Done()
		return nil
	})
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"serve", "--datadir", t.TempDir()}, &stdout, &stderr)
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not start")
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop after SIGTERM")
	}
	if !strings.Contains(stderr.String(), "lockstep: terminated signal received, shutting down\n") {
		t.Fatalf("stderr %q", stderr.String())
	}
}
