// Package group tests lockstep's group replication (docs/cluster.md) with
// real processes: three `lockstep serve` members on 127.0.0.1, clients
// over TCP, members killed with SIGKILL or stopped with SIGTERM and
// restarted on their data directories. It checks that
//
//   - what the primary commits reaches every member (same rows, same table
//     checksums), and a secondary refuses writes with 1290 naming the
//     primary;
//   - every write a client saw acknowledged survives the primary's death
//     and is on every member once the group has converged; a transaction
//     refused with 3101 (certainly not committed) is nowhere; one whose
//     COMMIT got no answer or 1180 (unknown outcome) is all there or not
//     at all, the same on every member, and stays decided;
//   - the primary keeps committing while a secondary is down;
//   - the group comes back after all members stop.
//
// The record of what was acknowledged lives in the test process. Failover
// times are logged (go test -v).
//
//	go test ./test/group/                                  # 3 primary kills
//	LOCKSTEP_GROUP_ROUNDS=20 go test -v -timeout 30m ./test/group/
//	LOCKSTEP_GROUP_SEED=123 go test -v -run PrimaryKill ./test/group/
//	LOCKSTEP_GROUP_WORKERS=1 go test ./test/group/         # the serial applier
//
// Members run with --replica-parallel-workers LOCKSTEP_GROUP_WORKERS
// (default 4: the secondaries' parallel applier).
package group

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"lockstep/internal/bench"
	"lockstep/internal/testutil"
)

const (
	groupSize = 3
	// stepTimeout bounds one step of a test: an election, a member
	// catching up, a verification.
	stepTimeout = 60 * time.Second
	// dsnTimeouts keep a client from waiting forever on a killed member.
	dsnTimeouts  = "&timeout=5s&readTimeout=30s&writeTimeout=30s&interpolateParams=true"
	statusPrefix = "Lockstep_group_replication_"
)

func init() {
	// The driver logs every connection a kill breaks; the errors it
	// returns are what the tests look at.
	mysql.SetLogger(log.New(io.Discard, "", 0))
}

// member is one server of the group, across its restarts.
type member struct {
	id        int
	groupAddr string // its group address, kept across restarts
	seeds     string // its --group-seeds, if not the cluster's
	datadir   string
	srv       *testutil.Server // nil while it is down
	db        *sql.DB          // pool to srv; nil while it is down
	// down is set when this run of the member is killed or stopped (a
	// new flag for each start): the clients' errors on it are expected.
	down *atomic.Bool
}

// cluster is a three-member group started by startCluster.
type cluster struct {
	t       *testing.T
	seeds   string
	args    []string  // more options for every member
	bin     string    // the lockstep binary ("": the test's)
	members []*member // members[i].id == i+1
	// proxies[i][j] carries member i+1's group traffic to member j+1
	// (startProxiedCluster; nil otherwise).
	proxies [][]*testutil.Proxy
}

// clusterOptions change how startClusterWith starts the group.
type clusterOptions struct {
	// proxied: every member reaches every other through a proxy of its
	// own (testutil.Proxy, one per direction of each pair), so that the
	// test can cut or blackhole links.
	proxied bool
	// args are more options for every member.
	args []string
	// bin is the lockstep binary the members run ("": the test's).
	bin string
}

// startCluster bootstraps a new group of three members and waits until
// one of them takes writes.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	return startClusterWith(t, clusterOptions{})
}

// proxiedGroupName is the proxied group's --group-name: its members'
// seeds differ (each names the proxies it dials), so the name they would
// derive from them would too.
const proxiedGroupName = "6c6f636b-7374-5000-8000-70726f787931"

func startClusterWith(t *testing.T, o clusterOptions) *cluster {
	t.Helper()
	c := &cluster{t: t, args: o.args, bin: o.bin}
	var seeds []string
	// The members' group ports stay bound here until each member starts:
	// a proxy's listener (port 0) could otherwise be given one of them.
	held := make([]net.Listener, 0, groupSize)
	defer func() {
		for _, ln := range held {
			ln.Close()
		}
	}()
	for id := 1; id <= groupSize; id++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, ln)
		port := ln.Addr().(*net.TCPAddr).Port
		m := &member{id: id, groupAddr: "127.0.0.1:" + strconv.Itoa(port),
			datadir: filepath.Join(t.TempDir(), "member"+strconv.Itoa(id))}
		c.members = append(c.members, m)
		seeds = append(seeds, fmt.Sprintf("%d=%s", id, m.groupAddr))
	}
	c.seeds = strings.Join(seeds, ",")
	if o.proxied {
		c.args = append(c.args, "--group-name", proxiedGroupName)
		c.proxies = make([][]*testutil.Proxy, groupSize)
		for i, from := range c.members {
			c.proxies[i] = make([]*testutil.Proxy, groupSize)
			var s []string
			for j, to := range c.members {
				if i == j {
					s = append(s, fmt.Sprintf("%d=%s", to.id, to.groupAddr))
					continue
				}
				px, err := testutil.NewProxy(to.groupAddr)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { px.Close() })
				c.proxies[i][j] = px
				s = append(s, fmt.Sprintf("%d=%s", to.id, px.Addr))
			}
			from.seeds = strings.Join(s, ",")
		}
	}
	t.Cleanup(c.closePools)
	for i, m := range c.members {
		held[i].Close()
		c.start(m, true)
	}
	c.waitPrimary(0)
	return c
}

// isolate breaks every link between m and the other members, both ways,
// with testutil.ProxyCut or ProxyBlackhole; heal restores them all.
func (c *cluster) isolate(m *member, how testutil.ProxyState) {
	c.t.Helper()
	if c.proxies == nil {
		c.t.Fatal("isolate needs a cluster started with clusterOptions.proxied")
	}
	i := m.id - 1
	for j := range c.proxies {
		if j == i {
			continue
		}
		for _, px := range []*testutil.Proxy{c.proxies[i][j], c.proxies[j][i]} {
			switch how {
			case testutil.ProxyCut:
				px.Cut()
			case testutil.ProxyBlackhole:
				px.Blackhole()
			default:
				c.t.Fatalf("isolate: %v", how)
			}
		}
	}
}

func (c *cluster) heal() {
	for _, row := range c.proxies {
		for _, px := range row {
			if px != nil {
				px.Heal()
			}
		}
	}
}

// start starts m on its data directory; bootstrap is the first start of
// a founding member.
func (c *cluster) start(m *member, bootstrap bool) {
	c.t.Helper()
	if m.srv != nil {
		c.t.Fatalf("member %d is already running", m.id)
	}
	seeds := c.seeds
	if m.seeds != "" {
		seeds = m.seeds
	}
	args := []string{"--datadir", m.datadir, "--server-id", strconv.Itoa(m.id),
		"--group-local-address", m.groupAddr, "--group-seeds", seeds,
		"--replica-parallel-workers", strconv.Itoa(envInt(c.t, "LOCKSTEP_GROUP_WORKERS", 4))}
	args = append(args, c.args...)
	if bootstrap {
		args = append(args, "--group-bootstrap")
	}
	if base := envInt(c.t, "LOCKSTEP_PPROF_BASE", 0); base > 0 {
		// Each member serves pprof on a port of its own: base + its id.
		c.t.Setenv("LOCKSTEP_PPROF", "127.0.0.1:"+strconv.Itoa(base+m.id))
	}
	m.srv = testutil.StartServerBinary(c.t, c.bin, args...)
	db, err := sql.Open("mysql", m.srv.DSN("")+dsnTimeouts)
	if err != nil {
		c.t.Fatalf("sql.Open for member %d: %v", m.id, err)
	}
	m.db = db
	m.down = new(atomic.Bool)
}

// kill ends m with SIGKILL.
func (c *cluster) kill(m *member) {
	m.down.Store(true)
	m.db.Close()
	m.srv.Kill()
	m.srv, m.db = nil, nil
}

// stop ends m with SIGTERM and fails the test unless it exits cleanly.
func (c *cluster) stop(m *member) {
	c.t.Helper()
	m.down.Store(true)
	m.db.Close()
	if err := m.srv.Stop(); err != nil {
		c.t.Errorf("member %d did not shut down cleanly: %v\n--- its output ---\n%s", m.id, err, m.srv.Stderr())
	}
	m.srv, m.db = nil, nil
}

func (c *cluster) closePools() {
	for _, m := range c.members {
		if m.db != nil {
			m.db.Close()
		}
	}
}

// up returns the members that are running.
func (c *cluster) up() []*member {
	var out []*member
	for _, m := range c.members {
		if m.srv != nil {
			out = append(out, m)
		}
	}
	return out
}

// status returns m's Lockstep_group_replication_* counters, without the
// prefix.
func status(ctx context.Context, m *member) (map[string]int64, error) {
	rows, err := m.db.QueryContext(ctx, "SHOW GLOBAL STATUS LIKE '"+statusPrefix+"%'")
	if err != nil {
		return nil, fmt.Errorf("member %d: SHOW STATUS: %w", m.id, err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("member %d: SHOW STATUS: %w", m.id, err)
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("member %d: %s = %q: %w", m.id, k, v, err)
		}
		out[strings.TrimPrefix(k, statusPrefix)] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("member %d: SHOW STATUS: %w", m.id, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("member %d: SHOW STATUS has no %s* counters", m.id, statusPrefix)
	}
	return out, nil
}

// findPrimary returns the running member that reports
// Lockstep_group_replication_primary = 1, or nil; a member that does not
// answer is skipped.
func (c *cluster) findPrimary(ctx context.Context) *member {
	for _, m := range c.up() {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		st, err := status(sctx, m)
		cancel()
		if err == nil && st["primary"] == 1 {
			return m
		}
	}
	return nil
}

// waitPrimary polls the running members until one takes writes and
// returns it; notID (if not 0) is a member that must not be it.
func (c *cluster) waitPrimary(notID int) *member {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	for ctx.Err() == nil {
		if p := c.findPrimary(ctx); p != nil && p.id != notID {
			return p
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.t.Fatalf("no member became primary within %v\n%s", stepTimeout, c.describe())
	return nil
}

// describe is every running member's group status, for failure messages.
func (c *cluster) describe() string {
	var b strings.Builder
	for _, m := range c.members {
		if m.srv == nil {
			fmt.Fprintf(&b, "  member %d: down\n", m.id)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		st, err := status(ctx, m)
		cancel()
		if err != nil {
			fmt.Fprintf(&b, "  member %d: %v\n", m.id, err)
			continue
		}
		fmt.Fprintf(&b, "  member %d: primary %d, primary_id %d, term %d, applied_index %d, written_index %d\n",
			m.id, st["primary"], st["primary_id"], st["term"], st["applied_index"], st["written_index"])
	}
	return b.String()
}

// waitConverged waits until every running member has applied the same
// index and the group has a primary (no writes may be running), and
// returns that index.
func (c *cluster) waitConverged() int64 {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	var last error
	for ctx.Err() == nil {
		idx, err := c.appliedEverywhere(ctx)
		if err == nil {
			return idx
		}
		last = err
		time.Sleep(20 * time.Millisecond)
	}
	c.t.Fatalf("the members did not converge within %v: %v\n%s", stepTimeout, last, c.describe())
	return 0
}

func (c *cluster) appliedEverywhere(ctx context.Context) (int64, error) {
	var idx int64 = -1
	primaries := 0
	for _, m := range c.up() {
		st, err := status(ctx, m)
		if err != nil {
			return 0, err
		}
		primaries += int(st["primary"])
		switch {
		case idx == -1:
			idx = st["applied_index"]
		case idx != st["applied_index"]:
			return 0, fmt.Errorf("applied indexes differ (member %d at %d, another at %d)", m.id, st["applied_index"], idx)
		}
		if st["written_index"] != st["applied_index"] {
			return 0, fmt.Errorf("member %d has written up to %d but applied up to %d", m.id, st["written_index"], st["applied_index"])
		}
	}
	if primaries != 1 {
		return 0, fmt.Errorf("%d members report being the primary", primaries)
	}
	return idx, nil
}

// checkChecksums fails the test unless every running member has the same
// tables with the same rows (internal/bench's checksums); the members must
// have converged.
func (c *cluster) checkChecksums(when string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	var first []bench.TableChecksum
	var firstID int
	for _, m := range c.up() {
		sums, err := bench.ServerChecksums(ctx, m.db)
		if err != nil {
			c.t.Fatalf("%s: checksums of member %d: %v", when, m.id, err)
		}
		if first == nil {
			first, firstID = sums, m.id
			continue
		}
		if !slices.Equal(first, sums) {
			c.t.Fatalf("%s: members %d and %d differ:\n  member %d: %v\n  member %d: %v",
				when, firstID, m.id, firstID, first, m.id, sums)
		}
	}
	if len(first) == 0 {
		c.t.Fatalf("%s: no tables to compare", when)
	}
}

// exec runs statements on m one by one and fails the test on an error.
func exec(t *testing.T, m *member, stmts ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	for _, q := range stmts {
		if _, err := m.db.ExecContext(ctx, q); err != nil {
			t.Fatalf("member %d: %s: %v", m.id, q, err)
		}
	}
}

// errno is a MySQL error's number, 0 for other errors.
func errno(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

func itoa(n int) string { return strconv.Itoa(n) }

func envString(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
