package server

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"lockstep/internal/config"
	logrec "lockstep/internal/record"
	"lockstep/internal/sqlfront"
	"lockstep/internal/txlog"
)

// openLocalTo is openLocal with recovery's report written to out.
func openLocalTo(t *testing.T, cfg config.Config, out *bytes.Buffer) *localServer {
	t.Helper()
	fe, err := sqlfront.New(sqlfront.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := openDurableFS(cfg, fe, out, nil)
	if err != nil {
		fe.Close()
		t.Fatalf("open %s: %v\n%s", cfg.Datadir, err, out)
	}
	s := &localServer{t: t, fe: fe, d: d, ctx: fe.NewLocalContext(context.Background())}
	t.Cleanup(s.close)
	return s
}

// mustFail runs q and checks that it fails with MySQL error num (as the
// protocol handler maps it).
func (s *localServer) mustFail(num int, q string) {
	s.t.Helper()
	_, err := s.query(q)
	if err == nil {
		s.t.Fatalf("%s succeeded, want error %d", q, num)
	}
	var se *mysql.SQLError
	if !errors.As(mysqlErrorIn(q, errContext{db: s.ctx.GetCurrentDatabase(), row: 1}, sql.CastSQLError(s.fe.ForeignKeyError(s.ctx.Session.ID(), q, err))), &se) || se.Num != num {
		s.t.Fatalf("%s: %v, want error %d", q, err, num)
	}
}

// catalogText is the server's catalog as a checkpoint writes it.
func (s *localServer) catalogText() string {
	s.t.Helper()
	items, err := s.fe.Catalog()
	if err != nil {
		s.t.Fatal(err)
	}
	var b strings.Builder
	for _, it := range items {
		b.WriteString(it.Database + ": " + it.SQL + "\n")
	}
	return b.String()
}

// loggedDDL returns the texts of the DDL records in the log of datadir
// (a closed server's), without their session marks; a failure mark as
// "FAILED <the text of the statement it names>".
func loggedDDL(t *testing.T, datadir string) []string {
	t.Helper()
	l, _, err := txlog.Open(txlog.Options{Dir: filepath.Join(datadir, "log"), MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	byIndex := map[uint64]string{}
	var out []string
	for lo, last := l.FirstIndex(), l.LastIndex(); lo <= last; {
		entries, err := l.Read(lo, last+1, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			lo = e.Index + 1
			if k, _ := logrec.PeekKind(e.Payload); k != logrec.KindDDL {
				continue
			}
			d, err := logrec.DecodeDDL(e.Payload)
			if err != nil {
				t.Fatal(err)
			}
			if at, ok := sqlfront.FailedDDLIndex(d.Query); ok {
				out = append(out, "FAILED "+byIndex[uint64(at)])
				continue
			}
			q := d.Query
			for strings.HasPrefix(q, "/* lockstep:") {
				q = q[strings.Index(q, "*/")+3:]
			}
			byIndex[e.Index] = q
			if q != "" {
				out = append(out, q)
			}
		}
	}
	return out
}

// recoveryComplaints returns the lines of a recovery report that speak of
// DDL failing.
func recoveryComplaints(report string) []string {
	var out []string
	for _, line := range strings.Split(report, "\n") {
		if strings.Contains(line, "failed again") || strings.Contains(line, "recovery: note:") ||
			strings.Contains(line, "failed when it ran") {
			out = append(out, line)
		}
	}
	return out
}

// TestFailedDDLStaysOutOfTheLog (issue 30, item 2): a DDL statement that
// fails is not replayed as a failure at every start. A failure the catalog
// call can see before it changes anything (the table exists, it does not,
// the index name is taken) keeps the statement out of the log; a statement
// that fails after it was logged (a unique key over duplicates, a foreign
// key refused after its CREATE TABLE made the table) is followed by a
// failure mark, and replay says nothing about it. Before, each of these
// printed "DDL failed again as when it was logged" at every restart.
func TestFailedDDLStaysOutOfTheLog(t *testing.T) {
	for _, viaCheckpoint := range []bool{false, true} {
		name := "log"
		if viaCheckpoint {
			name = "checkpoint"
		}
		t.Run(name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Datadir = t.TempDir()
			cfg.CheckpointLogSize = 0
			var out bytes.Buffer
			s := openLocalTo(t, cfg, &out)
			s.exec(
				"CREATE DATABASE d",
				"USE d",
				"CREATE TABLE t (id INT PRIMARY KEY, v INT, CONSTRAINT v_pos CHECK (v > 0))",
				"INSERT INTO t VALUES (1, 1), (2, 1)",
				"CREATE INDEX i ON t (v)",
			)
			if viaCheckpoint {
				// The failures go into the log after a checkpoint.
				if _, err := s.d.checkpoint(s.fe); err != nil {
					t.Fatal(err)
				}
			}
			// Refused before logging.
			s.mustFail(1050, "CREATE TABLE t (id INT)")
			s.mustFail(1050, "CREATE TABLE d.T (a INT PRIMARY KEY)")
			s.mustFail(1051, "DROP TABLE nosuch")
			s.mustFail(1051, "DROP TABLE t, nosuch")
			s.mustFail(1049, "CREATE TABLE nosuchdb.t (id INT)")
			s.mustFail(1008, "DROP DATABASE nosuchdb")
			s.mustFail(1007, "CREATE DATABASE d")
			s.mustFail(1061, "CREATE INDEX i ON t (id)")
			s.mustFail(1061, "ALTER TABLE t ADD INDEX i (id)")
			s.mustFail(1091, "ALTER TABLE t DROP INDEX nosuch")
			s.mustFail(1054, "ALTER TABLE t DROP COLUMN nosuch")
			s.mustFail(1060, "ALTER TABLE t ADD COLUMN v INT")
			s.mustFail(1146, "ALTER TABLE nosuch ADD COLUMN w INT")
			s.mustFail(3822, "ALTER TABLE t ADD CONSTRAINT v_pos CHECK (v < 10)")
			// Fail after logging: the changes undone, a failure mark.
			s.mustFail(1062, "ALTER TABLE t ADD UNIQUE KEY u (v)")
			s.mustFail(3780, "CREATE TABLE bad (id INT PRIMARY KEY, pid VARCHAR(5), FOREIGN KEY (pid) REFERENCES t (id))")
			s.mustFail(3822, "CREATE TABLE bad2 (a INT PRIMARY KEY, CONSTRAINT v_pos CHECK (a > 0))")
			// A statement that succeeds after them.
			s.exec("CREATE TABLE after_them (id INT PRIMARY KEY)", "INSERT INTO after_them VALUES (7)")
			before := s.catalogText()
			for _, gone := range []string{"`u`", "`bad`", "`bad2`"} {
				if strings.Contains(before, gone) {
					t.Fatalf("a failed statement left %s behind:\n%s", gone, before)
				}
			}
			s.close()

			logged := strings.Join(loggedDDL(t, cfg.Datadir), "\n")
			for _, q := range []string{"CREATE TABLE t (id INT)", "d.T", "nosuch", "CREATE DATABASE d\nCREATE DATABASE d", "ON t (id)", "ADD INDEX i", "ADD COLUMN", "v < 10"} {
				if strings.Contains(logged, q) {
					t.Errorf("the log holds a statement refused before it changed anything (%q):\n%s", q, logged)
				}
			}
			for _, want := range []string{
				"ALTER TABLE t ADD UNIQUE KEY u (v)\nFAILED ALTER TABLE t ADD UNIQUE KEY u (v)\n",
				"CREATE TABLE bad (id INT PRIMARY KEY, pid VARCHAR(5), FOREIGN KEY (pid) REFERENCES t (id))\nFAILED CREATE TABLE bad (",
				"CREATE TABLE bad2 (a INT PRIMARY KEY, CONSTRAINT v_pos CHECK (a > 0))\nFAILED CREATE TABLE bad2 (",
				"FAILED CREATE TABLE bad2 (a INT PRIMARY KEY, CONSTRAINT v_pos CHECK (a > 0))\nCREATE TABLE after_them",
			} {
				if !strings.Contains(logged, want) {
					t.Errorf("the log lacks %q:\n%s", want, logged)
				}
			}

			out.Reset()
			s = openLocalTo(t, cfg, &out)
			if c := recoveryComplaints(out.String()); len(c) > 0 {
				t.Errorf("recovery complained about DDL:\n%s", strings.Join(c, "\n"))
			}
			if after := s.catalogText(); after != before {
				t.Errorf("catalog after the restart:\n%s\nwant:\n%s", after, before)
			}
			s.exec("USE d", "INSERT INTO after_them VALUES (8)", "INSERT INTO t VALUES (3, 1)")
			s.mustFail(3819, "INSERT INTO t VALUES (4, -1)")
			s.close()

			// And once more: the records the second run added replay too.
			out.Reset()
			s = openLocalTo(t, cfg, &out)
			if c := recoveryComplaints(out.String()); len(c) > 0 {
				t.Errorf("second restart: recovery complained about DDL:\n%s", strings.Join(c, "\n"))
			}
			if got := s.rowsString("SELECT id FROM d.after_them ORDER BY id"); got != "[[7] [8]]" {
				t.Errorf("after_them after two restarts: %s", got)
			}
		})
	}
}

// TestFailedDDLWithoutMark: a log written before failure marks existed
// holds failed statements without one, and so does a log that ends with
// a crash between a statement and its mark. Such a log still starts, with
// one note per statement that says there is nothing to do (it said "DDL
// failed again as when it was logged", read as corruption), and the same
// catalog. A mark after a statement that succeeds at replay undoes it.
func TestFailedDDLWithoutMark(t *testing.T) {
	cfg := config.Default()
	cfg.Datadir = t.TempDir()
	cfg.CheckpointLogSize = 0
	var out bytes.Buffer
	s := openLocalTo(t, cfg, &out)
	s.exec("CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY)", "INSERT INTO d.t VALUES (1)")
	before := s.catalogText()
	// What an earlier lockstep logged for CREATE TABLE t (1050): the
	// statement, no mark.
	if _, err := s.d.LogDDL("d", "CREATE TABLE t (id INT)", s.fe.Storage().NextTableID()); err != nil {
		t.Fatal(err)
	}
	s.exec("INSERT INTO d.t VALUES (2)")
	s.close()

	out.Reset()
	s = openLocalTo(t, cfg, &out)
	c := recoveryComplaints(out.String())
	if len(c) != 1 || !strings.Contains(c[0], "recovery: note:") || !strings.Contains(c[0], "nothing to do") || !strings.Contains(c[0], "already exists") {
		t.Errorf("recovery said %q, want one note", c)
	}
	if strings.Contains(out.String(), "failed again") {
		t.Errorf("recovery report:\n%s", out.String())
	}
	if after := s.catalogText(); after != before {
		t.Errorf("catalog after the restart:\n%s\nwant:\n%s", after, before)
	}
	if got := s.rowsString("SELECT id FROM d.t ORDER BY id"); got != "[[1] [2]]" {
		t.Errorf("rows after the restart: %s", got)
	}

	// A statement that failed when it ran (its mark says so) but succeeds
	// at replay: what replay made of it is undone at the mark, and the
	// table id it took stays taken.
	next := s.fe.Storage().NextTableID()
	idx, err := s.d.LogDDL("d", "CREATE TABLE x (id INT PRIMARY KEY)", next)
	if err != nil {
		t.Fatal(err)
	}
	s.d.LogDDLFailed(idx, next+1)
	s.close()

	out.Reset()
	s = openLocalTo(t, cfg, &out)
	c = recoveryComplaints(out.String())
	if len(c) != 2 || !strings.Contains(c[1], "failed when it ran but not at replay") {
		t.Errorf("recovery said %q, want the note again and the undone statement", c)
	}
	if after := s.catalogText(); after != before {
		t.Errorf("catalog after the restart:\n%s\nwant:\n%s", after, before)
	}
	if got := s.fe.Storage().NextTableID(); got != next+1 {
		t.Errorf("next table id %d after the undone CREATE TABLE, want %d", got, next+1)
	}
	s.exec("CREATE TABLE d.y (id INT PRIMARY KEY)", "INSERT INTO d.y VALUES (1)")
	s.close()
	out.Reset()
	s = openLocalTo(t, cfg, &out)
	if got := s.rowsString("SELECT id FROM d.y"); got != "[[1]]" {
		t.Errorf("a table created after the undone one: %s", got)
	}
}
