package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"lockstep/internal/config"
	"lockstep/internal/server"
)

// runServer is server.Run; tests replace it to inspect the final Config.
var runServer = server.Run

// optionFlag holds a flag's raw text until the configuration is assembled, so
// that flags can be applied after the option file (defaults < file < flags)
// and their values are parsed by the same code as the file's.
type optionFlag struct {
	value string
	typ   string // shown in --help
}

func (f *optionFlag) String() string     { return f.value }
func (f *optionFlag) Set(s string) error { f.value = s; return nil }
func (f *optionFlag) Type() string       { return f.typ }

func newServeCmd(stderr io.Writer) *cobra.Command {
	def := config.Default()
	opts := []struct {
		key, typ, def, usage string
	}{
		{config.KeyDatadir, "dir", def.Datadir, "data directory; created if missing"},
		{config.KeyPort, "int", fmt.Sprint(def.Port), "TCP port to listen on (0 = any free port)"},
		{config.KeyBindAddress, "host", def.BindAddress, "IP address or host name to listen on"},
		{config.KeyUser, "string", def.User, "name of the initial account"},
		{config.KeyPassword, "string", def.Password, "password of the initial account"},
		{config.KeySyncBinlog, "0|1", fmt.Sprint(def.SyncBinlog), "1: fsync the log for every commit group; 0: about once a second (a power loss may lose the last second)"},
		{config.KeyRecoverTruncate, "bool", "OFF", "at start-up, drop a corrupt log record and everything after it instead of refusing to start"},
		{config.KeyRowImage, "full|minimal", def.RowImage, "before-images in the log: full rows or none (the primary key identifies the row)"},
		{config.KeyGroupCommitWakeup, "targeted|broadcast", def.GroupCommitWakeup, "how the group commit leader wakes its followers"},
		{config.KeyLogCompression, "bool", "ON", "zstd-compress log records above the threshold"},
		{config.KeyLogCompressMin, "bytes", fmt.Sprint(def.LogCompressMin), "size above which a log record is compressed"},
		{config.KeyCheckpointLogSize, "bytes", "256M", "write a checkpoint (and drop the log it covers) after this much log; 0 = never"},
		{config.KeyCheckpointFsync, "bytes", "8M", "send a checkpoint file to disk in chunks of this size while it is written; 0 = all at its final fsync"},
		{config.KeyCheckpointRate, "bytes/s", "128M", "write a checkpoint file at most this fast (it sleeps to keep to it); 0 = no limit"},
		{config.KeyLogRetentionSize, "bytes", "0", "keep at least this much log from before the last checkpoint (for replicas); 0 = only what recovery needs"},
		{config.KeyLogSegmentSize, "bytes", "64M", "start a new log segment file after this many bytes (4K..1G)"},
		{config.KeyLogPreallocate, "bool", "ON", "write the log into segment files zero-filled ahead of time (cheaper fsyncs)"},
		{config.KeyGCPaceTables, "bool", "ON", "give the Go collector the growth allowance of the heap outside the tables' rows (lower RSS; GOGC stays the upper bound)"},
		{config.KeySyncDelay, "microseconds", "0", "a group commit leader waits this long for more commits before its fsync (fewer fsyncs, longer commits)"},
		{config.KeySyncNoDelayCount, "count", "0", "end that wait once this many commits are queued; 0 = wait the whole delay"},
		{config.KeyLogSyncsInFlight, "count", "1", "commit groups that may wait for their log fsync at once, each with its own fsync (1..16)"},
		{config.KeySSL, "bool", "ON", "offer TLS, with a CA and server certificate generated in the data directory at first use (MySQL 8's auto_generate_certs)"},
		{config.KeyReplicaWorkers, "count", "0", "workers of the parallel applier crash recovery replays the log with (MySQL's replica_parallel_workers); 0 or 1: serial"},
		{config.KeyMetricsAddress, "host:port", "", "serve Prometheus metrics at http://host:port/metrics (docs/metrics.md); unset: no metrics endpoint"},
		{config.KeyServerID, "int", "1", "this server's id; in a group, its member id (MySQL's server_id)"},
		{config.KeyGroupLocalAddress, "host:port", "", "run as a member of a replication group, with group traffic on this address (MySQL's group_replication_local_address); unset: standalone"},
		{config.KeyGroupSeeds, "id=host:port,...", "", "every member of the group, this one included, by server id and group address"},
		{config.KeyGroupName, "uuid", "", "the group's UUID, which its GTIDs carry (MySQL's group_replication_group_name); unset: derived from group-seeds at bootstrap and kept in the data directory"},
		{config.KeyGroupLagRetention, "bytes", "1G", "log kept before a checkpoint for a member that lags behind it; a member further behind gets the checkpoint (and restarts to install it); 0 = keep whatever a member lacks"},
		{config.KeyGroupBootstrap, "bool", "OFF", "first start of a new group: start it with the members group-seeds names (give it to each founding member's first start only)"},
		{config.KeyReplicaOrder, "bool", "ON", "the parallel applier makes transactions visible in commit order (MySQL's replica_preserve_commit_order); OFF: each as soon as it is applied"},
		{config.KeyReplicaRetries, "count", "10", "times the applier tries a transaction again after a transient error (a lock conflict) before it stops (MySQL's replica_transaction_retries)"},
		{config.KeySecureFilePriv, "dir|NULL", "DATADIR-files", "the one directory LOAD_FILE, SELECT ... INTO OUTFILE and LOAD DATA INFILE may use (created if the default); NULL: none; empty: anywhere but the data directory"},
	}
	flags := map[string]*optionFlag{}
	var configFile string

	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Start a lockstep server",
		Long: "Start a lockstep server and serve MySQL clients until SIGINT or SIGTERM.\n\n" +
			"Settings come from, later ones winning: the embedded defaults, the option\n" +
			"file named by --config, and the flags given on the command line. The option\n" +
			"file uses MySQL's format: `name = value` lines with the flag names as names,\n" +
			"optionally under [lockstep], [mysqld] or [server]; other sections are skipped.",
		Example: "  lockstep serve\n" +
			"  lockstep serve --datadir /var/lib/lockstep --port 3307 --bind-address 0.0.0.0\n" +
			"  lockstep serve --config /etc/lockstep.cnf --port 3308",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := buildConfig(cmd, configFile, flags)
			if err != nil {
				return err
			}
			return serve(cmd.Context(), cfg, stderr)
		},
	}
	for _, o := range opts {
		f := &optionFlag{value: o.def, typ: o.typ}
		flags[o.key] = f
		cmd.Flags().Var(f, o.key, o.usage)
		if o.typ == "bool" {
			cmd.Flags().Lookup(o.key).NoOptDefVal = "ON" // --recover-truncate alone means ON
		}
	}
	cmd.Flags().StringVar(&configFile, "config", "", "read options from this option `file`")
	cmd.Flags().SortFlags = false
	// MySQL accepts --sync_binlog for --sync-binlog; so does lockstep.
	cmd.Flags().SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		return pflag.NormalizedName(strings.ReplaceAll(name, "_", "-"))
	})
	return cmd
}

// buildConfig assembles the configuration: defaults, then the option file,
// then the flags the user set. It validates the result and prepares the data
// directory. All its errors are usage errors (exit code 2).
func buildConfig(cmd *cobra.Command, configFile string, flags map[string]*optionFlag) (config.Config, error) {
	cfg := config.Default()
	if configFile != "" {
		if err := config.LoadFile(configFile, &cfg); err != nil {
			return cfg, err
		}
	}
	for _, key := range config.Keys {
		if !cmd.Flags().Changed(key) {
			continue
		}
		if err := cfg.Set(key, flags[key].value); err != nil {
			return cfg, fmt.Errorf("--%s: %v", key, err)
		}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	if err := config.PrepareDatadir(cfg.Datadir); err != nil {
		return cfg, err
	}
	abs, err := filepath.Abs(cfg.Datadir)
	if err != nil {
		return cfg, fmt.Errorf("datadir %s: %v", cfg.Datadir, err)
	}
	cfg.Datadir = abs
	return cfg, nil
}

// serve runs the server until it fails or a SIGINT/SIGTERM arrives. The first
// signal starts a clean shutdown; a second one terminates the process at once.
func serve(parent context.Context, cfg config.Config, stderr io.Writer) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case s := <-sigs:
			signal.Stop(sigs) // default handling again: a second signal kills the process
			fmt.Fprintf(stderr, "lockstep: %v signal received, shutting down\n", s)
			cancel()
		case <-ctx.Done():
		}
	}()

	var once sync.Once
	ready := func(addr string) {
		once.Do(func() {
			fmt.Fprintf(stderr, "lockstep: ready for connections on %s (datadir %s)\n", addr, cfg.Datadir)
		})
	}
	if err := runServer(ctx, cfg, ready); err != nil {
		return runtimeError{err}
	}
	return nil
}
