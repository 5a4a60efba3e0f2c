package server

import (
	"context"
	gosql "database/sql"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	mysqldriver "github.com/go-sql-driver/mysql"

	"lockstep/internal/config"
)

func freeLoopback(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// groupTestWorkers is the in-process group members'
// --replica-parallel-workers: the parallel applier on the secondaries.
const groupTestWorkers = 4

// startGroupInProcess starts a bootstrapped group of n members in this
// process and returns them once one takes writes, primary first; more
// changes each member's configuration after the group's.
func startGroupInProcess(t *testing.T, n int, more ...func(*config.Config)) []*procServer {
	t.Helper()
	seeds := map[uint64]string{}
	for id := 1; id <= n; id++ {
		seeds[uint64(id)] = freeLoopback(t)
	}
	var ms []*procServer
	for id := 1; id <= n; id++ {
		ms = append(ms, startInProcess(t, func(c *config.Config) {
			c.ServerID = uint64(id)
			c.GroupLocalAddress = seeds[uint64(id)]
			c.GroupSeeds = seeds
			c.GroupBootstrap = true
			c.ReplicaParallelWorkers = groupTestWorkers
			for _, f := range more {
				f(c)
			}
		}))
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for i, m := range ms {
			if m.status(t, "GLOBAL", "Lockstep_group_replication_primary") == 1 {
				ms[0], ms[i] = ms[i], ms[0]
				return ms
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no member took writes within 20 s")
	return nil
}

// TestWaitForExecutedGTIDSet: the group's GTIDs carry one name on every
// member; a session that wrote on the primary reads its write on a
// secondary after WAIT_FOR_EXECUTED_GTID_SET(the primary's
// @@gtid_executed); a set not yet executed times out with 1; a malformed
// set is 1772, a negative timeout 1210; KILL QUERY stops a wait.
func TestWaitForExecutedGTIDSet(t *testing.T) {
	// The serial applier (the other group tests run the parallel one).
	ms := startGroupInProcess(t, 3, func(c *config.Config) { c.ReplicaParallelWorkers = 1 })
	p, s := ms[0], ms[1]
	p.exec(t, "CREATE DATABASE d")
	p.exec(t, "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)")
	for i := 1; i <= 50; i++ {
		p.exec(t, fmt.Sprintf("INSERT INTO d.t VALUES (%d, %d)", i, i))
		executed := p.str(t, "SELECT @@gtid_executed")
		if got := s.str(t, fmt.Sprintf("SELECT WAIT_FOR_EXECUTED_GTID_SET('%s', 10)", executed)); got != "0" {
			t.Fatalf("wait for %s on a secondary: %s", executed, got)
		}
		if got := s.str(t, fmt.Sprintf("SELECT v FROM d.t WHERE id = %d", i)); got != fmt.Sprint(i) {
			t.Fatalf("after the wait, the secondary reads %q for row %d", got, i)
		}
	}
	// The secondary's applier metrics are live (not recovery's).
	if n := s.status(t, "GLOBAL", "Lockstep_applier_transactions"); n < 50 {
		t.Fatalf("Lockstep_applier_transactions on a secondary: %d, want >= 50", n)
	}
	if c, a := s.status(t, "GLOBAL", "Lockstep_group_replication_commit_index"), s.status(t, "GLOBAL", "Lockstep_group_replication_applied_index"); c < a || a == 0 {
		t.Fatalf("commit index %d, applied index %d", c, a)
	}
	pe, se := p.str(t, "SELECT @@gtid_executed"), s.str(t, "SELECT @@gtid_executed")
	if pe != se || p.str(t, "SELECT @@server_uuid") == s.str(t, "SELECT @@server_uuid") {
		t.Fatalf("gtid_executed %q on the primary, %q on a secondary; want the same (the group name), with different server_uuids", pe, se)
	}
	name, _, _ := strings.Cut(pe, ":")
	future := name + ":1-1000000"
	start := time.Now()
	if got := s.str(t, fmt.Sprintf("SELECT WAIT_FOR_EXECUTED_GTID_SET('%s', 0.2)", future)); got != "1" {
		t.Fatalf("wait for a set not executed: %s, want 1 (timeout)", got)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("the timed-out wait returned after %v", d)
	}
	if got := s.str(t, "SELECT WAIT_FOR_EXECUTED_GTID_SET('')"); got != "0" {
		t.Fatalf("wait for the empty set: %s", got)
	}
	for q, code := range map[string]string{
		"SELECT WAIT_FOR_EXECUTED_GTID_SET('not a set')":            "1772",
		"SELECT WAIT_FOR_EXECUTED_GTID_SET('" + name + ":5-2')":     "1772",
		"SELECT WAIT_FOR_EXECUTED_GTID_SET('" + name + ":1', -1)":   "1210",
		"SELECT WAIT_FOR_EXECUTED_GTID_SET('" + name + ":1', 1, 2)": "",
	} {
		_, err := s.db.Exec(q)
		if err == nil || (code != "" && !strings.Contains(err.Error(), code)) {
			t.Errorf("%s: %v, want error %s", q, err, code)
		}
	}

	// KILL QUERY ends an unbounded wait.
	conn := s.newSession(t)
	var id int64
	if err := conn.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := conn.ExecContext(context.Background(), fmt.Sprintf("SELECT WAIT_FOR_EXECUTED_GTID_SET('%s')", future))
		errc <- err
	}()
	time.Sleep(200 * time.Millisecond)
	s.exec(t, fmt.Sprintf("KILL QUERY %d", id))
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "1317") {
			t.Fatalf("the killed wait: %v, want 1317", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("KILL QUERY did not stop the wait within 5 s")
	}
}

// TestGroupHandOff: a primary that shuts down hands the primary role to
// another member first: the group has a primary again sooner than an
// election could give it one (raft's followers wait at least ElectionTick
// ticks, 1 s, before they campaign), and the data written before is there.
func TestGroupHandOff(t *testing.T) {
	ms := startGroupInProcess(t, 3)
	p := ms[0]
	p.exec(t, "CREATE DATABASE d")
	p.exec(t, "CREATE TABLE d.t (id INT PRIMARY KEY)")
	p.exec(t, "INSERT INTO d.t VALUES (1), (2), (3)")
	start := time.Now()
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
	var next *procServer
	for next == nil && time.Since(start) < 10*time.Second {
		for _, m := range ms[1:] {
			if m.status(t, "GLOBAL", "Lockstep_group_replication_primary") == 1 {
				next = m
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	took := time.Since(start)
	if next == nil {
		t.Fatal("no member took writes within 10 s of the primary's shutdown")
	}
	if took > 900*time.Millisecond {
		t.Fatalf("a member took writes %v after the primary began to shut down: no hand-off (an election takes at least 1 s)", took)
	}
	t.Logf("member took over %v after the primary began to shut down", took)
	next.exec(t, "INSERT INTO d.t VALUES (4)")
	if got := next.str(t, "SELECT COUNT(*) FROM d.t"); got != "4" {
		t.Fatalf("rows on the new primary: %s", got)
	}
}

// TestGroupConsistencyBefore: with group_replication_consistency = BEFORE
// a secondary's statement sees every transaction committed before it
// began, although the secondary's applier lags (slowed here); with
// EVENTUAL it does not wait. AFTER is refused. Without a quorum a BEFORE
// statement fails with 3100.
func TestGroupConsistencyBefore(t *testing.T) {
	testApplyDelay = 30 * time.Millisecond
	defer func() { testApplyDelay = 0 }()
	ms := startGroupInProcess(t, 3)
	p, s := ms[0], ms[1]
	p.exec(t, "CREATE DATABASE d")
	p.exec(t, "CREATE TABLE d.t (id INT PRIMARY KEY)")

	eventual := s.newSession(t)
	before := s.newSession(t)
	ctx := context.Background()
	if _, err := before.ExecContext(ctx, "SET SESSION group_replication_consistency = 'BEFORE'"); err != nil {
		t.Fatal(err)
	}
	if _, err := before.ExecContext(ctx, "SET SESSION group_replication_consistency = 'AFTER'"); err == nil || !strings.Contains(err.Error(), "1231") {
		t.Fatalf("SET ... = 'AFTER': %v, want 1231", err)
	}
	missed := 0
	for i := 1; i <= 10; i++ {
		p.exec(t, fmt.Sprintf("INSERT INTO d.t VALUES (%d)", i))
		var n int
		if err := before.QueryRowContext(ctx, fmt.Sprintf("SELECT COUNT(*) FROM d.t WHERE id = %d", i)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Fatalf("BEFORE: the secondary did not see row %d committed before the statement", i)
		}
		p.exec(t, fmt.Sprintf("INSERT INTO d.t VALUES (%d)", 100+i))
		if err := eventual.QueryRowContext(ctx, fmt.Sprintf("SELECT COUNT(*) FROM d.t WHERE id = %d", 100+i)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			missed++
		}
	}
	if missed == 0 {
		t.Fatal("EVENTUAL never read behind the primary: the applier delay does not show, so the BEFORE check proves nothing")
	}
	if got := s.status(t, "GLOBAL", "Lockstep_group_replication_read_barriers"); got < 10 {
		t.Fatalf("read barriers counted: %d, want >= 10", got)
	}

	// No quorum: the other two members stop.
	readBarrierWait = 500 * time.Millisecond
	defer func() { readBarrierWait = 10 * time.Second }()
	for _, m := range ms {
		if m != s {
			if err := m.stop(); err != nil {
				t.Fatal(err)
			}
		}
	}
	var n int
	err := before.QueryRowContext(ctx, "SELECT COUNT(*) FROM d.t").Scan(&n)
	if err == nil || !strings.Contains(err.Error(), "3100") {
		t.Fatalf("BEFORE without a quorum: %v, want 3100", err)
	}
	if err := eventual.QueryRowContext(ctx, "SELECT COUNT(*) FROM d.t").Scan(&n); err != nil {
		t.Fatalf("EVENTUAL without a quorum: %v", err)
	}
}

// TestGroupCheckpoint: members checkpoint on their own (a small
// --checkpoint-log-size), the checkpoint is the raft snapshot (its index in
// the raft-state file), the log's head is dropped up to what every member
// has, and a member restarted from its checkpoint holds the same data and
// goes on applying.
func TestGroupCheckpoint(t *testing.T) {
	t.Run("Entries", func(t *testing.T) { testGroupCheckpoint(t, false) })
	t.Run("Reinstall", func(t *testing.T) { testGroupCheckpoint(t, true) })
}

// testGroupCheckpoint: members checkpoint and cut their logs; a secondary
// stops while the primary checkpoints on and restarts. The primary keeps
// the log it lacks and sends entries; or, with reinstall, keeps at most
// 16 KiB of log for a lagging member (--group-lag-retention-size), cuts
// past it, and the secondary, which holds data, gets the checkpoint and
// restarts from it (Lockstep_group_replication_reinstalls). Either way it
// ends with the primary's rows.
func testGroupCheckpoint(t *testing.T, reinstall bool) {
	seeds := map[uint64]string{}
	for id := 1; id <= 3; id++ {
		seeds[uint64(id)] = freeLoopback(t)
	}
	dirs := map[int]string{}
	member := func(id int, bootstrap bool) *procServer {
		return startInProcess(t, func(c *config.Config) {
			if dirs[id] == "" {
				dirs[id] = c.Datadir
			}
			c.Datadir = dirs[id]
			c.ServerID = uint64(id)
			c.GroupLocalAddress = seeds[uint64(id)]
			c.GroupSeeds = seeds
			c.GroupBootstrap = bootstrap
			c.CheckpointLogSize = 64 << 10
			c.LogSegmentSize = 16 << 10
			c.GroupLagRetentionSize = 0
			if reinstall {
				c.GroupLagRetentionSize = 16 << 10
			}
		})
	}
	ms := []*procServer{member(1, true), member(2, true), member(3, true)}
	var p *procServer
	for deadline := time.Now().Add(20 * time.Second); p == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, m := range ms {
			if m.status(t, "GLOBAL", "Lockstep_group_replication_primary") == 1 {
				p = m
			}
		}
	}
	if p == nil {
		t.Fatal("no primary")
	}
	p.exec(t, "CREATE DATABASE d")
	p.exec(t, "CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(200))")
	pad := strings.Repeat("x", 150)
	for i := 1; i <= 3000; i++ {
		p.exec(t, fmt.Sprintf("INSERT INTO d.t VALUES (%d, '%s')", i, pad))
	}
	// Every member checkpoints and drops the head of its log.
	for _, m := range ms {
		deadline := time.Now().Add(20 * time.Second)
		for m.status(t, "GLOBAL", "Lockstep_checkpoints") == 0 || m.status(t, "GLOBAL", "Lockstep_log_first_index") <= 1 {
			if time.Now().After(deadline) {
				t.Fatalf("member %s: %d checkpoints, log first index %d", m.addr, m.status(t, "GLOBAL", "Lockstep_checkpoints"), m.status(t, "GLOBAL", "Lockstep_log_first_index"))
			}
			p.exec(t, fmt.Sprintf("UPDATE d.t SET v = '%s' WHERE id = 1", pad[:time.Now().Nanosecond()%100]))
			time.Sleep(50 * time.Millisecond)
		}
	}
	// A secondary restarts from its checkpoint and catches up.
	var s *procServer
	var sid int
	for i, m := range ms {
		if m != p {
			s, sid = m, i+1
			break
		}
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	// While it is down the primary checkpoints past what it has: the
	// primary must still send it entries (a checkpoint cannot be sent).
	before := p.status(t, "GLOBAL", "Lockstep_checkpoints")
	for i := 3001; p.status(t, "GLOBAL", "Lockstep_checkpoints") < before+2; i++ {
		if i > 20000 {
			t.Fatal("the primary did not checkpoint while a secondary was down")
		}
		p.exec(t, fmt.Sprintf("INSERT INTO d.t VALUES (%d, '%s')", i, pad))
	}
	if reinstall {
		if n := p.status(t, "GLOBAL", "Lockstep_group_replication_lag_cuts"); n == 0 {
			t.Fatal("the primary never cut its log past the stopped member")
		}
	}
	s2 := member(sid, false)
	want := p.str(t, "SELECT @@gtid_executed")
	// (A member that restarts to install the checkpoint refuses
	// connections for a moment.)
	got := ""
	for deadline := time.Now().Add(30 * time.Second); got != "0" && time.Now().Before(deadline); {
		var v gosql.NullString
		if err := s2.db.QueryRow(fmt.Sprintf("SELECT WAIT_FOR_EXECUTED_GTID_SET('%s', 5)", want)).Scan(&v); err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		got = v.String
	}
	if got != "0" {
		for _, m := range []*procServer{p, s2} {
			for _, v := range []string{"Lockstep_group_replication_applied_index", "Lockstep_group_replication_written_index", "Lockstep_group_replication_primary_id", "Lockstep_group_replication_term", "Lockstep_log_first_index", "Lockstep_checkpoints"} {
				t.Logf("%s %s = %d", m.addr, v, m.status(t, "GLOBAL", v))
			}
			t.Logf("%s gtid %s", m.addr, m.str(t, "SELECT @@gtid_executed"))
		}
		t.Fatalf("the restarted member did not catch up to %s", want)
	}
	for _, q := range []string{"SELECT COUNT(*) FROM d.t", "SELECT SUM(LENGTH(v)) FROM d.t", "SELECT MAX(id) FROM d.t"} {
		if a, b := p.str(t, q), s2.str(t, q); a != b {
			t.Fatalf("%s: %s on the primary, %s on the restarted member", q, a, b)
		}
	}
	want1 := int64(0)
	if reinstall {
		want1 = 1
	}
	if n := s2.status(t, "GLOBAL", "Lockstep_group_replication_reinstalls"); n != want1 {
		t.Fatalf("the restarted member installed the group's checkpoint %d times, want %d", n, want1)
	}
}

// TestGroupMembership: a member added to a running group whose log the
// checkpoints have cut gets the primary's checkpoint as a raft snapshot,
// catches up as a learner and is promoted to a voter; a member is removed;
// the primary role moves to the new member (group_replication_set_as_
// primary) and writes go on there.
func TestGroupMembership(t *testing.T) {
	seeds := map[uint64]string{}
	for id := 1; id <= 4; id++ {
		seeds[uint64(id)] = freeLoopback(t)
	}
	founding := map[uint64]string{1: seeds[1], 2: seeds[2], 3: seeds[3]}
	member := func(id int, s map[uint64]string, bootstrap bool) *procServer {
		return startInProcess(t, func(c *config.Config) {
			c.ServerID = uint64(id)
			c.GroupLocalAddress = seeds[uint64(id)]
			c.GroupSeeds = s
			c.GroupBootstrap = bootstrap
			c.CheckpointLogSize = 64 << 10
			c.LogSegmentSize = 16 << 10
		})
	}
	ms := map[int]*procServer{1: member(1, founding, true), 2: member(2, founding, true), 3: member(3, founding, true)}
	primary := func() (int, *procServer) {
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			for id, m := range ms {
				if m.status(t, "GLOBAL", "Lockstep_group_replication_primary") == 1 {
					return id, m
				}
			}
		}
		t.Fatal("no primary")
		return 0, nil
	}
	pid, p := primary()
	p.exec(t, "CREATE DATABASE d")
	p.exec(t, "CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(200))")
	pad := strings.Repeat("y", 150)
	for i := 1; p.status(t, "GLOBAL", "Lockstep_log_first_index") <= 2; i++ {
		if i > 20000 {
			t.Fatal("the primary's log was never cut")
		}
		p.exec(t, fmt.Sprintf("INSERT INTO d.t VALUES (%d, '%s')", i, pad))
	}
	if _, err := ms[(pid%3)+1].db.Exec(fmt.Sprintf("SELECT group_replication_add_member(4, '%s')", seeds[4])); err == nil || !strings.Contains(err.Error(), "3910") {
		t.Fatalf("add member on a secondary: %v, want 3910", err)
	}
	m4 := member(4, seeds, false)
	ms[4] = m4
	if got := p.str(t, fmt.Sprintf("SELECT group_replication_add_member(4, '%s')", seeds[4])); !strings.Contains(got, "added") {
		t.Fatalf("add member: %q", got)
	}
	want := p.str(t, "SELECT @@gtid_executed")
	if got := m4.str(t, fmt.Sprintf("SELECT WAIT_FOR_EXECUTED_GTID_SET('%s', 30)", want)); got != "0" {
		t.Fatalf("the new member did not catch up to %s (applied index %d)", want, m4.status(t, "GLOBAL", "Lockstep_group_replication_applied_index"))
	}
	for _, q := range []string{"SELECT COUNT(*) FROM d.t", "SELECT SUM(LENGTH(v)) FROM d.t"} {
		if a, b := p.str(t, q), m4.str(t, q); a != b {
			t.Fatalf("%s: %s on the primary, %s on the new member", q, a, b)
		}
	}
	for deadline := time.Now().Add(20 * time.Second); p.status(t, "GLOBAL", "Lockstep_group_replication_voters") != 4; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the new member was not promoted: %d voters, %d learners", p.status(t, "GLOBAL", "Lockstep_group_replication_voters"), p.status(t, "GLOBAL", "Lockstep_group_replication_learners"))
		}
	}
	// Remove a founding secondary.
	rid := 1
	for rid == pid {
		rid++
	}
	p.exec(t, fmt.Sprintf("SELECT group_replication_remove_member(%d)", rid))
	if v := p.status(t, "GLOBAL", "Lockstep_group_replication_voters"); v != 3 {
		t.Fatalf("voters after the removal: %d", v)
	}
	// The primary role moves to the new member, and writes go on there.
	p.exec(t, "SELECT group_replication_set_as_primary(4)")
	for deadline := time.Now().Add(10 * time.Second); m4.status(t, "GLOBAL", "Lockstep_group_replication_primary") != 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("member 4 did not become the primary")
		}
	}
	m4.exec(t, "INSERT INTO d.t VALUES (100000, 'on member 4')")
	if _, err := p.db.Exec("INSERT INTO d.t VALUES (100001, 'x')"); err == nil || !strings.Contains(err.Error(), "1290") {
		t.Fatalf("a write on the old primary: %v, want 1290", err)
	}
}

// TestGroupDeposedPrimary: the primary is cut off from the group (its
// transport drops everything) while a session has an open transaction on
// it; the others elect a new primary, which commits a change to the same
// row; the cut heals. The old primary refuses the open transaction's
// COMMIT (its entry cannot be committed), applies the new primary's
// change only once that transaction is gone (storage's apply must not go
// over a local transaction's versions), and ends with the group's data.
func TestGroupDeposedPrimary(t *testing.T) {
	testGroups = &sync.Map{}
	defer func() { testGroups = nil }()
	seeds := map[uint64]string{}
	for id := 1; id <= 3; id++ {
		seeds[uint64(id)] = freeLoopback(t)
	}
	ms := map[uint64]*procServer{}
	for id := uint64(1); id <= 3; id++ {
		ms[id] = startInProcess(t, func(c *config.Config) {
			c.ServerID = id
			c.GroupLocalAddress = seeds[id]
			c.GroupSeeds = seeds
			c.GroupBootstrap = true
		})
	}
	primary := func(skip uint64) (uint64, *procServer) {
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			for id, m := range ms {
				if id != skip && m.status(t, "GLOBAL", "Lockstep_group_replication_primary") == 1 {
					return id, m
				}
			}
		}
		t.Fatal("no primary")
		return 0, nil
	}
	pid, p := primary(0)
	p.exec(t, "CREATE DATABASE d")
	p.exec(t, "CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(20))")
	p.exec(t, "INSERT INTO d.t VALUES (1, 'start'), (2, 'start')")

	ctx := context.Background()
	local := p.newSession(t)
	if _, err := local.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if _, err := local.ExecContext(ctx, "UPDATE d.t SET v = 'old primary' WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	gv, _ := testGroups.Load(seeds[pid])
	old := gv.(*group)
	old.tr.Isolate(true)
	// Cut off, it acknowledges no write.
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	if _, err := p.db.ExecContext(cctx, "INSERT INTO d.t VALUES (3, 'cut off')"); err == nil {
		t.Fatal("the primary cut off from the group acknowledged a write")
	}
	cancel()

	qid, q := primary(pid)
	q.exec(t, "UPDATE d.t SET v = 'new primary' WHERE id = 1")
	q.exec(t, "UPDATE d.t SET v = 'new primary' WHERE id = 2")
	want := q.str(t, "SELECT @@gtid_executed")
	target := q.status(t, "GLOBAL", "Lockstep_group_replication_applied_index")
	old.tr.Isolate(false)
	// The old primary receives the new primary's entries, and its applier
	// holds them back while the local transaction is open.
	for deadline := time.Now().Add(20 * time.Second); p.status(t, "GLOBAL", "Lockstep_group_replication_written_index") < target; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the old primary never received the new primary's entries")
		}
	}
	time.Sleep(300 * time.Millisecond)
	if a := p.status(t, "GLOBAL", "Lockstep_group_replication_applied_index"); a >= target {
		t.Fatalf("the old primary applied up to %d (the new primary's changes at %d) under its open transaction", a, target)
	}

	// The open transaction cannot commit on a member that lost the
	// primary role.
	_, err := local.ExecContext(ctx, "COMMIT")
	var me *mysqldriver.MySQLError
	if !errors.As(err, &me) || me.Number != 3101 {
		t.Fatalf("COMMIT on the deposed primary: %v, want 3101", err)
	}
	if got := p.str(t, fmt.Sprintf("SELECT WAIT_FOR_EXECUTED_GTID_SET('%s', 20)", want)); got != "0" {
		t.Fatalf("the old primary did not apply the new primary's transactions (member %d is primary now)", qid)
	}
	for _, m := range ms {
		if got := m.str(t, "SELECT GROUP_CONCAT(v ORDER BY id) FROM d.t"); got != "new primary,new primary" {
			t.Fatalf("member %s holds %q", m.addr, got)
		}
	}
	if p.status(t, "GLOBAL", "Lockstep_group_replication_member_error") != 0 {
		t.Fatal("the old primary stopped replicating")
	}
}
