package integration

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"lockstep/internal/testutil"
)

// TestAdminTools: administration tools DBAs run against MySQL work against
// lockstep. Each found something: pt-online-schema-change died on the
// missing innodb_stats_persistent, then on its triggers' DELETE IGNORE
// (1064); mysqltuner died dividing by a zero Innodb_log_writes, after
// SELECT ~0 failed; SHOW ENGINE INNODB STATUS was 1064; pt-kill's KILL
// QUERY '28' was 1064; mysqlslap's
// CREATE SCHEMA failed with no database selected. A missing tool
// skips its subtest, except under CI; scripts/test.sh installs them
// (Debian's percona-toolkit and mysqltuner).
func TestAdminTools(t *testing.T) {
	srv := startServer(t)
	port := strconv.Itoa(srv.Port)

	// pt-online-schema-change copies a table into an altered copy while
	// triggers carry the writes made meanwhile, then swaps the two (see
	// ptOnlineSchemaChange). LOCKSTEP_PTOSC_RUNS runs it that many times
	// (1 by default; the metadata lock work ran it hundreds of times under
	// load, docs/sqlfront.md "Metadata locks").
	t.Run("pt-online-schema-change", func(t *testing.T) {
		osc, err := exec.LookPath("pt-online-schema-change")
		testutil.RequireInstalled(t, "pt-online-schema-change (Debian's percona-toolkit)", err == nil)
		runs := 1
		if v := os.Getenv("LOCKSTEP_PTOSC_RUNS"); v != "" {
			if runs, err = strconv.Atoi(v); err != nil || runs < 1 {
				t.Fatalf("LOCKSTEP_PTOSC_RUNS=%q: want a positive count", v)
			}
		}
		if runs == 1 {
			ptOnlineSchemaChange(t, srv, osc, 1)
			return
		}
		for i := 1; i <= runs; i++ {
			if !t.Run(fmt.Sprintf("run%d", i), func(t *testing.T) { ptOnlineSchemaChange(t, srv, osc, int64(i)) }) {
				return
			}
		}
	})

	t.Run("mysqltuner", func(t *testing.T) {
		tuner, err := exec.LookPath("mysqltuner")
		testutil.RequireInstalled(t, "mysqltuner", err == nil)
		s := newDatabase(t, srv).session("setup")
		s.exec("CREATE TABLE t (id INT PRIMARY KEY)")
		s.exec("INSERT INTO t VALUES (1), (2)")
		out, err := exec.Command(tuner, "--host", "127.0.0.1", "--port", port, "--user", "root", "--pass", "",
			"--forcemem", "2048", "--forceswap", "0", "--nocolor").CombinedOutput()
		if err != nil {
			t.Fatalf("mysqltuner: %v\n%s", err, out)
		}
		for _, bad := range []string{"Illegal division", "Uncaught exception", "Failed to execute: SELECT ~0"} {
			if strings.Contains(string(out), bad) {
				t.Errorf("mysqltuner output has %q:\n%s", bad, out)
			}
		}
		if !strings.Contains(string(out), "InnoDB Metrics") {
			t.Errorf("mysqltuner did not reach its InnoDB section:\n%s", out)
		}
	})

	// mysqlslap (Debian's mariadb-client) creates its schema with no
	// database selected (CREATE SCHEMA was 1046 then), loads it from
	// several clients and drops it; it sends each statement with a NUL
	// after it (1064 near '' for an UPDATE ending in a string).
	t.Run("mysqlslap", func(t *testing.T) {
		slap, err := exec.LookPath("mysqlslap")
		testutil.RequireInstalled(t, "mysqlslap (Debian's mariadb-client)", err == nil)
		for _, load := range [][]string{
			{"--auto-generate-sql-load-type=update"}, // ends each UPDATE with a string, then the NUL
			{"--auto-generate-sql-load-type=mixed", "--auto-generate-sql-secondary-indexes=1"},
			{"--auto-generate-sql-load-type=key", "--auto-generate-sql-add-autoincrement"},
		} {
			args := append([]string{"-h127.0.0.1", "-P" + port, "-uroot", "--auto-generate-sql", "--concurrency=4",
				"--iterations=1", "--number-of-queries=200", "--create-schema=slap_it"}, load...)
			out, err := exec.Command(slap, args...).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "Average number of seconds to run all queries") {
				t.Fatalf("mysqlslap %s: %v\n%s", load, err, out)
			}
		}
	})

	// pt-kill stops a long statement (its driver sent the id quoted:
	// 1064, and the statement ran on); pt-deadlock-logger reads SHOW
	// /*!40100 ENGINE*/ INNODB STATUS (1064).
	t.Run("pt-kill", func(t *testing.T) {
		kill, err := exec.LookPath("pt-kill")
		testutil.RequireInstalled(t, "pt-kill (Debian's percona-toolkit)", err == nil)
		victim := newDatabase(t, srv).session("victim")
		done := make(chan error, 1)
		go func() { done <- victim.execErr("SELECT SLEEP(30) /* pt-kill target */") }()
		out, err := exec.Command(kill, "h=127.0.0.1,P="+port+",u=root", "--busy-time", "1", "--match-info", "pt-kill target",
			"--kill-query", "--print", "--run-time", "5", "--interval", "1").CombinedOutput()
		if err != nil {
			t.Fatalf("pt-kill: %v\n%s", err, out)
		}
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "1317") {
				t.Errorf("the killed statement: %v, want 1317\n%s", err, out)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("pt-kill did not stop the statement:\n%s", out)
		}
	})

	t.Run("pt-deadlock-logger", func(t *testing.T) {
		logger, err := exec.LookPath("pt-deadlock-logger")
		testutil.RequireInstalled(t, "pt-deadlock-logger (Debian's percona-toolkit)", err == nil)
		out, err := exec.Command(logger, "h=127.0.0.1,P="+port+",u=root", "--run-time", "2", "--interval", "1").CombinedOutput()
		if err != nil || strings.Contains(string(out), "Error") {
			t.Fatalf("pt-deadlock-logger: %v\n%s", err, out)
		}
	})

	t.Run("pt-mysql-summary", func(t *testing.T) {
		sum, err := exec.LookPath("pt-mysql-summary")
		testutil.RequireInstalled(t, "pt-mysql-summary (Debian's percona-toolkit)", err == nil)
		out, err := exec.Command(sum, "--host", "127.0.0.1", "--port", port, "--user", "root").CombinedOutput()
		if err != nil {
			t.Fatalf("pt-mysql-summary: %v\n%s", err, out)
		}
		host, _ := os.Hostname()
		for _, want := range []string{"Hostname | " + host, "Version | 8.0.33-lockstep", "# The End"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("pt-mysql-summary lacks %q:\n%s", want, out)
			}
		}
	})
}

// ptOnlineSchemaChange runs pt-online-schema-change on a table while
// ptoscWriters clients keep inserting, updating and deleting rows as fast as
// they can, each remembering what it did; afterwards the table holds exactly
// those rows (the rows of a serial history: each client owns the ids
// ≡ its number mod ptoscWriters, so the clients' histories do not
// interleave on a row), with the new column. Nothing paces the writers
// around the tool's CREATE TRIGGER, RENAME and DROP: the metadata locks
// (sqlfront/mdl.go) make a write planned before such DDL wait for it and
// find the table by name again. Before them this test once in about fifty
// runs under load found a deleted row back in the table (a DELETE planned
// before the tool created its triggers ran after the copy took the row).
func ptOnlineSchemaChange(t *testing.T, srv *testutil.Server, osc string, seed int64) {
	const ptoscWriters = 4
	const initial = 3000
	e := newDatabase(t, srv)
	s := e.session("setup")
	s.exec("CREATE TABLE items (id INT PRIMARY KEY, v INT NOT NULL, name VARCHAR(20), KEY (name))")
	var vals []string
	for i := 1; i <= initial; i++ {
		vals = append(vals, fmt.Sprintf("(%d, %d, 'n%d')", i, i, i%50))
	}
	s.exec("INSERT INTO items VALUES " + strings.Join(vals, ","))

	stop := make(chan struct{})
	var wg sync.WaitGroup
	type writer struct {
		want   map[int]int // this writer's ids: the rows a serial history leaves
		writes int         // changes it made while the tool ran
		err    error
	}
	writers := make([]*writer, ptoscWriters)
	for g := range writers {
		w := &writer{want: map[int]int{}}
		for id := 1; id <= initial; id++ {
			if id%ptoscWriters == g {
				w.want[id] = id
			}
		}
		writers[g] = w
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed*100 + int64(g)))
			next := initial + 1 // the next id of this writer's inserts
			for next%ptoscWriters != g {
				next++
			}
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				var q string
				id := ptoscWriters*rng.Intn(next/ptoscWriters) + g
				if id == 0 {
					id = ptoscWriters
				}
				switch n % 3 {
				case 0:
					id, next = next, next+ptoscWriters
					q = fmt.Sprintf("INSERT INTO items (id, v, name) VALUES (%d, %d, 'w')", id, -id)
				case 1:
					q = fmt.Sprintf("UPDATE items SET v = v + 1000000 WHERE id = %d", id)
				default:
					q = fmt.Sprintf("DELETE FROM items WHERE id = %d", id)
				}
				res, err := e.db.ExecContext(e.ctx, q)
				if err != nil {
					// The tool's chunk copy locks rows; a write that waited
					// too long failed and changed nothing.
					if strings.Contains(err.Error(), "1205") || strings.Contains(err.Error(), "1213") {
						continue
					}
					w.err = fmt.Errorf("%s: %w", q, err)
					return
				}
				if k, _ := res.RowsAffected(); k == 1 {
					w.writes++
					switch n % 3 {
					case 0:
						w.want[id] = -id
					case 1:
						w.want[id] += 1000000
					default:
						delete(w.want, id)
					}
				}
			}
		}(g)
	}
	out, err := exec.Command(osc, "h=127.0.0.1,P="+strconv.Itoa(srv.Port)+",u=root,D="+e.name+",t=items",
		"--alter", "ADD COLUMN stock INT NOT NULL DEFAULT 7", "--execute", "--recursion-method=none",
		"--chunk-size=500").CombinedOutput()
	close(stop)
	wg.Wait()
	if err != nil || !strings.Contains(string(out), "Successfully altered") {
		t.Fatalf("pt-online-schema-change: %v\n%s", err, out)
	}
	want := map[int]int{}
	total := 0
	for g, w := range writers {
		total += w.writes
		if w.err != nil {
			t.Fatalf("writer %d: %v", g, w.err)
		}
		if w.writes < 20 {
			t.Errorf("writer %d made only %d writes while the tool ran: the test shows nothing about its triggers", g, w.writes)
		}
		for id, v := range w.want {
			want[id] = v
		}
	}
	t.Logf("%d changes by %d writers while the tool ran", total, ptoscWriters)
	rows, err := e.db.QueryContext(e.ctx, "SELECT id, v, stock FROM items")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[int]int{}
	for rows.Next() {
		var id, v, stock int
		if err := rows.Scan(&id, &v, &stock); err != nil {
			t.Fatal(err)
		}
		if stock != 7 {
			t.Fatalf("row %d: stock %d, want the new column's default 7", id, stock)
		}
		got[id] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("%d rows after the change, want %d", len(got), len(want))
	}
	for id, v := range got {
		if _, ok := want[id]; !ok {
			t.Errorf("row %d (v %d) is there, the writers deleted it or never inserted it", id, v)
		}
	}
	for id, v := range want {
		if g, ok := got[id]; !ok || g != v {
			t.Errorf("row %d: %d (present %v), want %d", id, g, ok, v)
		}
	}
	if n := s.int("SELECT COUNT(*) FROM information_schema.triggers WHERE trigger_schema = DATABASE()"); n != 0 {
		t.Errorf("%d triggers left behind", n)
	}
	if n := s.int("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE()"); n != 1 {
		t.Errorf("%d tables left, want 1", n)
	}
}
