package integration

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"lockstep/internal/testutil"
)

// groupMember is one row of performance_schema.replication_group_members.
type groupMember struct {
	channel, id, host string
	port              sql.NullInt64
	state, role       string
	version, stack    string
}

func groupMembers(ctx context.Context, db *sql.DB) ([]groupMember, error) {
	rows, err := db.QueryContext(ctx, "SELECT CHANNEL_NAME, MEMBER_ID, MEMBER_HOST, MEMBER_PORT, MEMBER_STATE, "+
		"MEMBER_ROLE, MEMBER_VERSION, MEMBER_COMMUNICATION_STACK FROM performance_schema.replication_group_members")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []groupMember
	for rows.Next() {
		var m groupMember
		if err := rows.Scan(&m.channel, &m.id, &m.host, &m.port, &m.state, &m.role, &m.version, &m.stack); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// viewOf renders a member list as "ID:STATE:ROLE ..." with a MEMBER_ID
// that is uuids[i] (member i+1's server_uuid) as i+1, and self's as "self".
func viewOf(ms []groupMember, uuids []string, self int) string {
	var b strings.Builder
	for _, m := range ms {
		id := m.id
		for i, u := range uuids {
			if id == u {
				id = strconv.Itoa(i + 1)
				if i == self {
					id = "self"
				}
			}
		}
		fmt.Fprintf(&b, "%s:%s:%s ", id, m.state, m.role)
	}
	return strings.TrimSpace(b.String())
}

// startGroup starts n members of a new group as real processes; member i
// (1-based) is ms[i-1], its group address groupAddrs[i-1].
func startGroup(t *testing.T, n int) (ms []*testutil.Server, groupAddrs []string) {
	t.Helper()
	var seeds []string
	for i := 1; i <= n; i++ {
		p, err := testutil.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		a := net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
		groupAddrs = append(groupAddrs, a)
		seeds = append(seeds, fmt.Sprintf("%d=%s", i, a))
	}
	for i := 1; i <= n; i++ {
		ms = append(ms, testutil.StartServer(t, "--server-id", strconv.Itoa(i), "--group-local-address", groupAddrs[i-1],
			"--group-seeds", strings.Join(seeds, ","), "--group-bootstrap"))
	}
	return ms, groupAddrs
}

// TestGroupMembersView: on every member of a 3-member group,
// performance_schema.replication_group_members has one row per member,
// all ONLINE, one PRIMARY (the same on every member), MEMBER_ID the
// member's server_uuid, MEMBER_HOST and MEMBER_PORT its SQL address; after the primary
// is killed, the two others show it UNREACHABLE within seconds and one of
// them PRIMARY.
func TestGroupMembersView(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srvs, _ := startGroup(t, 3)
	dbs := make([]*sql.DB, len(srvs))
	uuids := make([]string, len(srvs))
	for i, s := range srvs {
		dbs[i] = s.DB(t, "")
		if err := dbs[i].QueryRowContext(ctx, "SELECT @@server_uuid").Scan(&uuids[i]); err != nil {
			t.Fatal(err)
		}
	}
	// want is the view member i should have when primary leads and the
	// members in down are gone.
	want := func(i, primary int, down map[int]bool) string {
		var parts []string
		for j := range srvs {
			id := strconv.Itoa(j + 1)
			if j == i {
				id = "self"
			}
			state, role := "ONLINE", "SECONDARY"
			if down[j] {
				state = "UNREACHABLE"
			}
			if j == primary {
				role = "PRIMARY"
			}
			parts = append(parts, id+":"+state+":"+role)
		}
		return strings.Join(parts, " ")
	}
	// waitViews waits until every live member shows the view want gives,
	// and returns how long that took.
	waitViews := func(primary func() int, down map[int]bool, within time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		for {
			p := primary()
			ok, last := p >= 0, ""
			for i := range srvs {
				if down[i] || !ok {
					continue
				}
				ms, err := groupMembers(ctx, dbs[i])
				if err != nil {
					t.Fatalf("member %d: %v", i+1, err)
				}
				if got := viewOf(ms, uuids, i); got != want(i, p, down) {
					ok, last = false, fmt.Sprintf("member %d sees %q, want %q", i+1, got, want(i, p, down))
				}
			}
			if ok {
				return time.Since(start)
			}
			if time.Since(start) > within {
				t.Fatalf("after %v: %s (primary %d)", within, last, p+1)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// primaryOf is the member that says it is the primary (SHOW STATUS), -1
	// when none or more than one.
	primaryOf := func(down map[int]bool) func() int {
		return func() int {
			p := -1
			for i := range srvs {
				if down[i] {
					continue
				}
				if status(t, ctx, dbs[i], "SHOW GLOBAL STATUS LIKE 'Lockstep_group_replication_primary_id'")["Lockstep_group_replication_primary_id"] == int64(i+1) {
					if p >= 0 {
						return -1
					}
					p = i
				}
			}
			return p
		}
	}
	took := waitViews(primaryOf(nil), nil, 30*time.Second)
	t.Logf("all members ONLINE with one PRIMARY after %v", took)

	// The other columns, on one member.
	ms, err := groupMembers(ctx, dbs[0])
	if err != nil {
		t.Fatal(err)
	}
	// MEMBER_HOST and MEMBER_PORT: the member's SQL address, as MySQL's
	// (not its group address).
	for j, m := range ms {
		host, port, _ := net.SplitHostPort(srvs[j].Addr)
		if m.channel != "group_replication_applier" || m.host != host || strconv.FormatInt(m.port.Int64, 10) != port ||
			!strings.HasPrefix(m.version, "8.0.") || m.stack != "raft" {
			t.Errorf("member %d's row: %+v", j+1, m)
		}
	}

	// The primary is killed.
	old := primaryOf(nil)()
	srvs[old].Kill()
	down := map[int]bool{old: true}
	took = waitViews(primaryOf(down), down, 20*time.Second)
	t.Logf("primary (member %d) killed: UNREACHABLE on the others, a new PRIMARY, after %v", old+1, took)
}

// TestGroupMembersStandalone: a server that is not in a group has the
// table, empty (as MySQL without Group Replication).
func TestGroupMembersStandalone(t *testing.T) {
	srv := startServer(t)
	ms, err := groupMembers(context.Background(), srv.DB(t, ""))
	if err != nil || len(ms) != 0 {
		t.Fatalf("standalone server: %+v, %v; want no rows", ms, err)
	}
}
