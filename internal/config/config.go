// Package config owns lockstep's options: their names, defaults, parsing
// from flags and option files, and validation with clear errors.
//
// Every option has one name, used both as a command-line flag (--bind-address)
// and as a key in an option file (bind-address = ...). Sources are applied in
// this order, later ones winning:
//
//	Default()  <  the --config option file (LoadFile)  <  flags given explicitly
//
// Each step goes through Config.Set, so a bad value is reported the same way
// wherever it came from.
package config

import (
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Config is the validated configuration of one lockstep process.
type Config struct {
	Datadir     string // --datadir, default ./lockstep-data
	BindAddress string // --bind-address, default 127.0.0.1
	Port        int    // --port, default 3306; 0 picks a free port
	User        string // --user, initial account, default root
	Password    string // --password, default empty

	// Durability and the log (docs/durability.md).
	SyncBinlog        int    // --sync-binlog: 1 fsync per commit group (default), 0 about once a second
	RecoverTruncate   bool   // --recover-truncate: drop a corrupt log record and everything after it
	RowImage          string // --binlog-row-image: full (default) or minimal before-images
	GroupCommitWakeup string // --group-commit-wakeup: targeted (default) or broadcast
	LogCompression    bool   // --log-compression: zstd for large log records (default on)
	LogCompressMin    int    // --log-compression-threshold: bytes above which a record is compressed
	CheckpointLogSize int64  // --checkpoint-log-size: checkpoint after this many log bytes (0: never)
	// --checkpoint-fsync-threshold: a checkpoint file is sent to disk in
	// chunks of this many bytes while it is written (InnoDB's
	// innodb_fsync_threshold); 0: by the final fsync only.
	CheckpointFsyncThreshold int64
	// --checkpoint-rate-limit: bytes per second a checkpoint file is
	// written at, at most; 0: no limit.
	CheckpointRateLimit int64
	LogRetentionSize    int64 // --log-retention-size: log bytes kept before a checkpoint, for replicas (0: none)
	LogSegmentSize      int64 // --log-segment-size: the log starts a new segment file after this many bytes
	LogPreallocate      bool  // --log-preallocate: write into zero-filled segment files (default on)
	// --gc-pace-tables: size the Go collector's growth allowance by the
	// heap outside the tables' row memory (default on; server/gcpace.go).
	GCPaceTables bool
	// --binlog-group-commit-sync-delay: microseconds a group commit leader
	// waits for more commits before its fsync (0, the default: none);
	// --binlog-group-commit-sync-no-delay-count: queued commits that end
	// the wait early (0: none). MySQL's names; SET GLOBAL changes both.
	SyncDelayMicros  int
	SyncNoDelayCount int
	// --log-syncs-in-flight: commit groups that may wait for their fsync
	// at once, each with its own fsync (default 1; docs/commit.md).
	LogSyncsInFlight int
	// --ssl: offer TLS with the certificates in the data directory,
	// generated at first use (default ON, as MySQL 8; docs/accounts.md).
	SSL bool
	// --secure-file-priv: the one directory LOAD_FILE, SELECT ... INTO
	// OUTFILE/DUMPFILE and LOAD DATA INFILE may use (MySQL's option).
	// Unset: DATADIR-files beside the data directory, created at start;
	// "NULL": none; "": anywhere but the data directory.
	SecureFilePriv    string
	SecureFilePrivSet bool
	// ReplicaParallelWorkers: worker goroutines of the parallel applier
	// that crash recovery replays the log with (MySQL's
	// replica_parallel_workers; docs/apply.md): --replica-parallel-workers.
	// 0 or 1: serial, the default — on this 2-vCPU machine kind parallel
	// replay measured 0.8-0.9x of serial (docs/benchmarks/notes.md, "Replay").
	ReplicaParallelWorkers int
	// ReplicaPreserveCommitOrder: the parallel applier makes transactions
	// visible in commit order (MySQL's replica_preserve_commit_order,
	// default ON): --replica-preserve-commit-order. OFF: each as soon as
	// it is applied.
	ReplicaPreserveCommitOrder bool
	// ReplicaTransactionRetries: how many times the applier tries a
	// transaction again after a transient error before it stops (MySQL's
	// replica_transaction_retries, default 10):
	// --replica-transaction-retries.
	ReplicaTransactionRetries int

	// MetricsAddress: where the Prometheus metrics endpoint listens
	// (host:port, serving /metrics; docs/metrics.md); empty: no endpoint.
	// --metrics-address.
	MetricsAddress string

	// Group replication (docs/cluster.md), MySQL Group Replication's names.
	// Without GroupLocalAddress the server runs standalone.
	ServerID          uint64            // --server-id: this member's id in the group (default 1)
	GroupLocalAddress string            // --group-local-address host:port: where group traffic arrives
	GroupSeeds        map[uint64]string // --group-seeds id=host:port,...: every member, this one included
	GroupBootstrap    bool              // --group-bootstrap: the first start of a new group's members
	// --group-name: the group's UUID, the source of its GTIDs (MySQL's
	// group_replication_group_name); unset: derived from group-seeds at
	// bootstrap, and kept in the data directory.
	GroupName string
	// --group-lag-retention-size: the most log bytes before a checkpoint
	// the group's members keep for a member that lags behind it (one that
	// is down, or slow); a member further behind gets the checkpoint
	// instead, and a member that holds data installs it by restarting.
	// 0: keep whatever any member lacks.
	GroupLagRetentionSize int64
	// GroupReinstalls is not an option: the times this process started
	// the server again to install the group's checkpoint (server.Run), for
	// the member's status.
	GroupReinstalls int64
}

// Grouped reports whether the server runs as a member of a group.
func (c Config) Grouped() bool { return c.GroupLocalAddress != "" }

// CheckGroup validates the group options together (Set checks each alone).
func (c Config) CheckGroup() error {
	if !c.Grouped() {
		if len(c.GroupSeeds) > 0 || c.GroupBootstrap || c.GroupName != "" {
			return errors.New("group-seeds, group-bootstrap and group-name need group-local-address")
		}
		return nil
	}
	if len(c.GroupSeeds) == 0 {
		return errors.New("group-local-address needs group-seeds, naming every member with its id (id=host:port,...)")
	}
	if _, ok := c.GroupSeeds[c.ServerID]; !ok {
		return fmt.Errorf("group-seeds does not name this server's server-id %d", c.ServerID)
	}
	return nil
}

// Option names, shared by flags and option-file keys.
const (
	KeyDatadir     = "datadir"
	KeyBindAddress = "bind-address"
	KeyPort        = "port"
	KeyUser        = "user"
	KeyPassword    = "password"

	KeySyncBinlog        = "sync-binlog"
	KeyRecoverTruncate   = "recover-truncate"
	KeyRowImage          = "binlog-row-image"
	KeyGroupCommitWakeup = "group-commit-wakeup"
	KeyLogCompression    = "log-compression"
	KeyLogCompressMin    = "log-compression-threshold"
	KeyCheckpointLogSize = "checkpoint-log-size"
	KeyCheckpointFsync   = "checkpoint-fsync-threshold"
	KeyCheckpointRate    = "checkpoint-rate-limit"
	KeyLogRetentionSize  = "log-retention-size"
	KeyLogSegmentSize    = "log-segment-size"
	KeyLogPreallocate    = "log-preallocate"
	KeyGCPaceTables      = "gc-pace-tables"
	KeySyncDelay         = "binlog-group-commit-sync-delay"
	KeySyncNoDelayCount  = "binlog-group-commit-sync-no-delay-count"
	KeySSL               = "ssl"
	KeyLogSyncsInFlight  = "log-syncs-in-flight"
	KeySecureFilePriv    = "secure-file-priv"
	KeyReplicaWorkers    = "replica-parallel-workers"
	KeyServerID          = "server-id"
	KeyGroupLocalAddress = "group-local-address"
	KeyGroupSeeds        = "group-seeds"
	KeyGroupBootstrap    = "group-bootstrap"
	KeyGroupName         = "group-name"
	KeyGroupLagRetention = "group-lag-retention-size"
	KeyReplicaOrder      = "replica-preserve-commit-order"
	KeyReplicaRetries    = "replica-transaction-retries"
	KeyMetricsAddress    = "metrics-address"
)

// MaxReplicaParallelWorkers is --replica-parallel-workers's limit (MySQL's).
const MaxReplicaParallelWorkers = 1024

// MaxReplicaTransactionRetries is --replica-transaction-retries's limit
// (MySQL's is 2^64-1; no applier retries a transaction that often).
const MaxReplicaTransactionRetries = 1 << 31

// DefaultReplicaTransactionRetries is MySQL's default.
const DefaultReplicaTransactionRetries = 10

// Limits of the sync delay options (MySQL's).
const (
	MaxSyncDelayMicros  = 1000000
	MaxSyncNoDelayCount = 100000
	MaxLogSyncsInFlight = 16
)

// DefaultCheckpointRate is --checkpoint-rate-limit's default, bytes per
// second (docs/durability.md says how it was chosen).
const DefaultCheckpointRate = 128 << 20

// Limits of --log-segment-size.
const (
	MinLogSegmentSize = 4 << 10
	MaxLogSegmentSize = 1 << 30
)

// Keys lists every option name in the order they are documented.
var Keys = []string{KeyDatadir, KeyPort, KeyBindAddress, KeyUser, KeyPassword,
	KeySyncBinlog, KeyRecoverTruncate, KeyRowImage, KeyGroupCommitWakeup, KeyLogCompression, KeyLogCompressMin, KeyCheckpointLogSize,
	KeyCheckpointFsync, KeyCheckpointRate, KeyLogRetentionSize, KeyLogSegmentSize, KeyLogPreallocate, KeyGCPaceTables, KeySyncDelay, KeySyncNoDelayCount, KeyLogSyncsInFlight, KeySSL, KeySecureFilePriv, KeyReplicaWorkers, KeyReplicaOrder, KeyReplicaRetries,
	KeyMetricsAddress, KeyServerID, KeyGroupLocalAddress, KeyGroupSeeds, KeyGroupBootstrap, KeyGroupName, KeyGroupLagRetention}

// Default returns the embedded defaults: data in ./lockstep-data, listening on
// 127.0.0.1:3306, account root with no password.
func Default() Config {
	return Config{
		Datadir:     "./lockstep-data",
		BindAddress: "127.0.0.1",
		Port:        3306,
		User:        "root",
		Password:    "",

		SyncBinlog:        1,
		RowImage:          "full",
		GroupCommitWakeup: "targeted",
		LogCompression:    true,
		LogCompressMin:    4096,
		CheckpointLogSize: 256 << 20,
		LogSegmentSize:    64 << 20,

		CheckpointFsyncThreshold: 8 << 20,
		CheckpointRateLimit:      DefaultCheckpointRate,
		LogPreallocate:           true,
		GCPaceTables:             true,
		LogSyncsInFlight:         1,
		SSL:                      true,
		ServerID:                 1,
		GroupLagRetentionSize:    1 << 30,

		ReplicaPreserveCommitOrder: true,
		ReplicaTransactionRetries:  DefaultReplicaTransactionRetries,
	}
}

// NormalizeKey maps an option name as written by a user to its canonical
// form: lower case, with '_' accepted for '-' as MySQL does (bind_address).
func NormalizeKey(key string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(key)), "_", "-")
}

// ErrUnknownKey is wrapped by Set's error for a name that is not an option.
var ErrUnknownKey = errors.New("unknown option")

// Set parses value for the option key (any spelling NormalizeKey accepts) and
// stores it in c. The error names the option and the bad value; it does not
// name a source (the caller adds file:line or the flag).
func (c *Config) Set(key, value string) error {
	switch NormalizeKey(key) {
	case KeyDatadir:
		c.Datadir = value
	case KeyBindAddress:
		c.BindAddress = value
	case KeyPort:
		p, err := ParsePort(value)
		if err != nil {
			return err
		}
		c.Port = p
	case KeyUser:
		c.User = value
	case KeyPassword:
		c.Password = value
	case KeySyncBinlog:
		switch strings.TrimSpace(value) {
		case "0":
			c.SyncBinlog = 0
		case "1":
			c.SyncBinlog = 1
		default:
			return fmt.Errorf("invalid sync-binlog %q: must be 0 or 1", value)
		}
	case KeyRecoverTruncate:
		b, err := parseBool(value)
		if err != nil {
			return fmt.Errorf("invalid recover-truncate %q: %v", value, err)
		}
		c.RecoverTruncate = b
	case KeyRowImage:
		v := strings.ToLower(strings.TrimSpace(value))
		if v != "full" && v != "minimal" {
			return fmt.Errorf("invalid binlog-row-image %q: must be full or minimal", value)
		}
		c.RowImage = v
	case KeyGroupCommitWakeup:
		v := strings.ToLower(strings.TrimSpace(value))
		if v != "targeted" && v != "broadcast" {
			return fmt.Errorf("invalid group-commit-wakeup %q: must be targeted or broadcast", value)
		}
		c.GroupCommitWakeup = v
	case KeyLogCompression:
		b, err := parseBool(value)
		if err != nil {
			return fmt.Errorf("invalid log-compression %q: %v", value, err)
		}
		c.LogCompression = b
	case KeyLogPreallocate:
		b, err := parseBool(value)
		if err != nil {
			return fmt.Errorf("invalid log-preallocate %q: %v", value, err)
		}
		c.LogPreallocate = b
	case KeyGCPaceTables:
		b, err := parseBool(value)
		if err != nil {
			return fmt.Errorf("invalid gc-pace-tables %q: %v", value, err)
		}
		c.GCPaceTables = b
	case KeyLogCompressMin:
		n, ok := intIn(value, 0, math.MaxInt)
		if !ok {
			return fmt.Errorf("invalid log-compression-threshold %q: must be a number of bytes >= 0", value)
		}
		c.LogCompressMin = n
	case KeyCheckpointLogSize:
		n, err := parseSize(value)
		if err != nil {
			return fmt.Errorf("invalid checkpoint-log-size %q: %v", value, err)
		}
		c.CheckpointLogSize = n
	case KeyCheckpointFsync:
		n, err := parseSize(value)
		if err != nil {
			return fmt.Errorf("invalid checkpoint-fsync-threshold %q: %v", value, err)
		}
		c.CheckpointFsyncThreshold = n
	case KeyCheckpointRate:
		n, err := parseSize(value)
		if err != nil {
			return fmt.Errorf("invalid checkpoint-rate-limit %q: %v", value, err)
		}
		c.CheckpointRateLimit = n
	case KeyGroupLagRetention:
		n, err := parseSize(value)
		if err != nil {
			return fmt.Errorf("invalid group-lag-retention-size %q: %v", value, err)
		}
		c.GroupLagRetentionSize = n
	case KeyLogRetentionSize:
		n, err := parseSize(value)
		if err != nil {
			return fmt.Errorf("invalid log-retention-size %q: %v", value, err)
		}
		c.LogRetentionSize = n
	case KeyLogSegmentSize:
		n, err := parseSize(value)
		if err != nil || n < MinLogSegmentSize || n > MaxLogSegmentSize {
			return fmt.Errorf("invalid log-segment-size %q: must be a byte count from 4K to 1G", value)
		}
		c.LogSegmentSize = n
	case KeySecureFilePriv:
		c.SecureFilePriv, c.SecureFilePrivSet = value, true
	case KeyReplicaWorkers:
		n, ok := intIn(value, 0, MaxReplicaParallelWorkers)
		if !ok {
			return fmt.Errorf("invalid replica-parallel-workers %q: must be a count from 0 to %d", value, MaxReplicaParallelWorkers)
		}
		c.ReplicaParallelWorkers = n
	case KeyServerID:
		n, err := strconv.ParseUint(strings.TrimSpace(value), 10, 32)
		if err != nil || n == 0 {
			return fmt.Errorf("invalid server-id %q: must be a number from 1 to 4294967295", value)
		}
		c.ServerID = n
	case KeyGroupLocalAddress:
		if _, _, err := net.SplitHostPort(strings.TrimSpace(value)); err != nil {
			return fmt.Errorf("invalid group-local-address %q: must be host:port", value)
		}
		c.GroupLocalAddress = strings.TrimSpace(value)
	case KeyMetricsAddress:
		v := strings.TrimSpace(value)
		if v != "" {
			if err := checkHostPort(v); err != nil {
				return fmt.Errorf("invalid metrics-address %q: %v", value, err)
			}
		}
		c.MetricsAddress = v
	case KeyGroupSeeds:
		seeds, err := parseSeeds(value)
		if err != nil {
			return fmt.Errorf("invalid group-seeds %q: %v", value, err)
		}
		c.GroupSeeds = seeds
	case KeyGroupName:
		v := strings.ToLower(strings.TrimSpace(value))
		if !IsUUID(v) {
			return fmt.Errorf("invalid group-name %q: must be a UUID such as aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", value)
		}
		c.GroupName = v
	case KeyGroupBootstrap:
		b, err := parseBool(value)
		if err != nil {
			return fmt.Errorf("invalid group-bootstrap %q: %v", value, err)
		}
		c.GroupBootstrap = b
	case KeyReplicaOrder:
		b, err := parseBool(value)
		if err != nil {
			return fmt.Errorf("invalid replica-preserve-commit-order %q: %v", value, err)
		}
		c.ReplicaPreserveCommitOrder = b
	case KeyReplicaRetries:
		n, ok := intIn(value, 0, MaxReplicaTransactionRetries)
		if !ok {
			return fmt.Errorf("invalid replica-transaction-retries %q: must be a count from 0 to %d", value, MaxReplicaTransactionRetries)
		}
		c.ReplicaTransactionRetries = n
	case KeySSL:
		b, err := parseBool(value)
		if err != nil {
			return fmt.Errorf("invalid ssl %q: %v", value, err)
		}
		c.SSL = b
	case KeySyncDelay:
		n, ok := intIn(value, 0, MaxSyncDelayMicros)
		if !ok {
			return fmt.Errorf("invalid binlog-group-commit-sync-delay %q: must be microseconds from 0 to 1000000", value)
		}
		c.SyncDelayMicros = n
	case KeySyncNoDelayCount:
		n, ok := intIn(value, 0, MaxSyncNoDelayCount)
		if !ok {
			return fmt.Errorf("invalid binlog-group-commit-sync-no-delay-count %q: must be a count from 0 to 100000", value)
		}
		c.SyncNoDelayCount = n
	case KeyLogSyncsInFlight:
		n, ok := intIn(value, 1, MaxLogSyncsInFlight)
		if !ok {
			return fmt.Errorf("invalid log-syncs-in-flight %q: must be a count from 1 to %d", value, MaxLogSyncsInFlight)
		}
		c.LogSyncsInFlight = n
	default:
		return fmt.Errorf("%w %q", ErrUnknownKey, key)
	}
	return nil
}

// IsUUID reports whether s is a UUID in its 8-4-4-4-12 hexadecimal form.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				return false
			}
		}
	}
	return true
}

// checkHostPort checks that s is host:port with a port number (the host
// may be empty: every address).
func checkHostPort(s string) error {
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return errors.New("must be host:port")
	}
	if _, err := ParsePort(port); err != nil {
		return errors.New("must be host:port with a port from 0 to 65535")
	}
	return nil
}

// parseSeeds parses id=host:port,... (every member of the group).
func parseSeeds(s string) (map[uint64]string, error) {
	out := map[uint64]string{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		idText, addr, ok := strings.Cut(item, "=")
		id, err := strconv.ParseUint(strings.TrimSpace(idText), 10, 32)
		if !ok || err != nil || id == 0 {
			return nil, fmt.Errorf("%q: each member must be id=host:port with an id from 1 to 4294967295", item)
		}
		addr = strings.TrimSpace(addr)
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("%q: %q is not host:port", item, addr)
		}
		if _, dup := out[id]; dup {
			return nil, fmt.Errorf("member %d is named twice", id)
		}
		out[id] = addr
	}
	if len(out) == 0 {
		return nil, errors.New("names no member")
	}
	return out, nil
}

// parseSize parses a byte count with MySQL's optional K, M or G suffix.
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'k', 'K':
			mult, s = 1<<10, s[:n-1]
		case 'm', 'M':
			mult, s = 1<<20, s[:n-1]
		case 'g', 'G':
			mult, s = 1<<30, s[:n-1]
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 || v > (1<<62)/mult {
		return 0, errors.New("must be a byte count such as 1048576, 64M or 1G")
	}
	return v * mult, nil
}

// parseBool accepts MySQL's spellings of a boolean option.
func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "on", "true", "yes", "":
		return true, nil
	case "0", "off", "false", "no":
		return false, nil
	}
	return false, errors.New("must be ON or OFF (1 or 0)")
}

// intIn parses an integer option value and reports whether it is in
// [lo, hi].
func intIn(value string, lo, hi int) (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(value))
	return n, err == nil && n >= lo && n <= hi
}

// SecureFileDir is the secure-file-priv directory in force: the one given,
// or DATADIR-files; disabled is true for NULL (case-insensitive), and dir
// is "" for an explicitly empty value (anywhere but the data directory).
func (c Config) SecureFileDir() (dir string, disabled bool) {
	if !c.SecureFilePrivSet {
		return strings.TrimRight(c.Datadir, "/") + "-files", false
	}
	if strings.EqualFold(strings.TrimSpace(c.SecureFilePriv), "NULL") {
		return "", true
	}
	return c.SecureFilePriv, false
}

// ParsePort parses a TCP port number, 0..65535 (0 = pick a free port).
func ParsePort(s string) (int, error) {
	p, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("invalid port %q: not a number", s)
	}
	if p < 0 || p > 65535 {
		return 0, fmt.Errorf("invalid port %d: must be 0..65535", p)
	}
	return p, nil
}

// Validate checks the whole configuration and returns the first problem as a
// one-line error. It does not touch the file system; see PrepareDatadir.
//
// Port 0 is valid and means "let the operating system pick a free port"; the
// address actually bound is reported when the server is ready. Tests use it.
func (c Config) Validate() error {
	if strings.TrimSpace(c.Datadir) == "" {
		return errors.New("datadir must not be empty")
	}
	if c.Port < 0 || c.Port > 65535 {
		return fmt.Errorf("invalid port %d: must be 0..65535", c.Port)
	}
	if c.User == "" {
		return errors.New("user must not be empty")
	}
	if err := validateHost(c.BindAddress); err != nil {
		return err
	}
	if c.LogSegmentSize != 0 && (c.LogSegmentSize < MinLogSegmentSize || c.LogSegmentSize > MaxLogSegmentSize) {
		return fmt.Errorf("invalid log-segment-size %d: must be 4K..1G", c.LogSegmentSize)
	}
	if c.LogRetentionSize < 0 {
		return fmt.Errorf("invalid log-retention-size %d: must be >= 0", c.LogRetentionSize)
	}
	return c.CheckGroup()
}

// validateHost accepts an IPv4 or IPv6 literal (brackets optional for IPv6),
// "localhost", or a syntactically valid host name. Whether the name resolves
// is left to the listener.
func validateHost(h string) error {
	if h == "" {
		return errors.New("bind-address must not be empty")
	}
	bare := h
	if strings.HasPrefix(bare, "[") && strings.HasSuffix(bare, "]") {
		bare = bare[1 : len(bare)-1]
	}
	if net.ParseIP(bare) != nil {
		return nil
	}
	if !isHostname(h) {
		return fmt.Errorf("invalid bind-address %q: not an IP address or host name", h)
	}
	return nil
}

// isHostname reports whether s is a DNS name: dot-separated labels of 1..63
// letters, digits and inner hyphens, 253 bytes at most, not all-numeric (so a
// mistyped IPv4 address such as 127.0.0.300 is rejected).
func isHostname(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	allDigits := true
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			b := label[i]
			switch {
			case b >= '0' && b <= '9':
			case b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b == '-':
				allDigits = false
			default:
				return false
			}
		}
	}
	return !allDigits
}

// PrepareDatadir makes sure path is a usable data directory: it is created
// (with parents, mode 0750) when missing, must be a directory, and must be
// writable, which is checked by creating and removing a probe file. Errors are
// one line and name the directory.
func PrepareDatadir(path string) error {
	if strings.TrimSpace(path) == "" {
		return errors.New("datadir must not be empty")
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(path, 0o750); err != nil {
			return fmt.Errorf("datadir %s: cannot create: %v", path, cause(err))
		}
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("datadir %s: cannot create: a parent is not a directory", path)
	case err != nil:
		return fmt.Errorf("datadir %s: %v", path, cause(err))
	case !fi.IsDir():
		return fmt.Errorf("datadir %s: exists and is not a directory", path)
	}
	probe, err := os.CreateTemp(path, ".lockstep-write-probe-*")
	if err != nil {
		return fmt.Errorf("datadir %s: not writable: %v", path, cause(err))
	}
	name := probe.Name()
	cerr := probe.Close()
	rerr := os.Remove(name)
	if cerr != nil {
		return fmt.Errorf("datadir %s: not writable: %v", path, cause(cerr))
	}
	if rerr != nil {
		return fmt.Errorf("datadir %s: cannot remove probe file: %v", path, cause(rerr))
	}
	return nil
}

// cause strips the *PathError wrapper (which repeats the path) from err.
func cause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
