// Package differential runs a corpus of SQL scenarios against lockstep and
// against MariaDB 10.11 (started by the test on loopback) and compares, for
// every statement, the result set (column names, types, unsigned flag,
// values), the error code, SQLSTATE and message, affected rows, the last
// insert id, the info string, the AUTOCOMMIT and IN_TRANS status flags and
// the warnings. Where MariaDB is known to differ from MySQL 8 the corpus
// says so and gives MySQL 8's outcome, which lockstep must match instead
// (docs/differential.md lists every such point).
package differential

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"lockstep/internal/testutil"
)

// mysql8Mode is MySQL 8.0's default sql_mode; both servers run the corpus
// under it (MariaDB's default differs, and so does lockstep's today).
const mysql8Mode = "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"

// server is one side of the comparison.
type server struct {
	name      string
	addr      string
	user      string
	collation string // the scenario database's collation
}

func TestAgainstMariaDB(t *testing.T) {
	corpus, err := loadCorpus("testdata")
	if err != nil {
		t.Fatal(err)
	}
	if len(corpus) == 0 {
		t.Fatal("no corpus files in testdata")
	}
	mdb := startMariaDB(t)
	ls := testutil.StartServer(t)
	sides := [2]server{
		{name: "lockstep", addr: ls.Addr, user: "root", collation: "utf8mb4_0900_ai_ci"},
		// MariaDB 10.11 has no utf8mb4_0900_ai_ci; unicode_520_ci is the
		// nearest (accent- and case-insensitive, but PAD SPACE).
		{name: "mariadb", addr: mdb.addr, user: "diff", collation: "utf8mb4_unicode_520_ci"},
	}

	names := make([]string, 0, len(corpus))
	for n := range corpus {
		names = append(names, n)
	}
	sort.Strings(names)
	prepared, ran := 0, 0
	for _, name := range names {
		stmts := corpus[name]
		t.Run(name, func(t *testing.T) {
			ran++
			prepared += runScenario(t, name, stmts, sides)
		})
	}
	// The prepared pass must have something to compare: every SELECT of
	// the corpus without a directive (checked when every scenario ran).
	t.Logf("prepared pass: %d statements compared", prepared)
	if ran == len(names) && prepared < 60 {
		t.Errorf("the prepared pass compared %d statements; the corpus has 78 SELECTs without a directive", prepared)
	}
}

// runScenario runs one corpus file on both servers and returns how many of
// its statements the prepared pass compared.
func runScenario(t *testing.T, name string, stmts []statement, sides [2]server) (prepared int) {
	db := "diff_" + name
	var conns [2]*conn
	for i, s := range sides {
		c, err := dial(s.addr, s.user, "")
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		defer c.close()
		for _, q := range []string{
			"DROP DATABASE IF EXISTS " + db,
			"CREATE DATABASE " + db + " CHARACTER SET utf8mb4 COLLATE " + s.collation,
			"USE " + db,
			"SET SESSION sql_mode='" + mysql8Mode + "'",
			"SET NAMES utf8mb4",
		} {
			o, err := c.query(q)
			if err != nil {
				t.Fatalf("%s: %s: %v", s.name, q, err)
			}
			if o.err != nil {
				t.Fatalf("%s: %s: %v", s.name, q, o.err)
			}
		}
		conns[i] = c
	}
	defer func() {
		for _, c := range conns {
			_, _ = c.query("DROP DATABASE IF EXISTS " + db)
		}
	}()

	accept := map[int][]string{} // LOCKSTEP_DIFF_ACCEPT: line -> lockstep's outcome
	for _, st := range stmts {
		var got [2][]string
		for i, c := range conns {
			o, err := c.query(st.sql)
			if err != nil {
				t.Fatalf("%s:%d on %s: connection failed: %v\n%s", st.file, st.line, sides[i].name, err, st.sql)
			}
			if o.infoLength != 0 {
				// The packet's length disagrees with the string's (vitess
				// wrote '#' there until okinfo.go).
				t.Errorf("%s:%d on %s: info string %q came with length %d", st.file, st.line, sides[i].name, o.info, o.infoLength)
			}
			got[i] = renderWithWarnings(t, st, c, sides[i], o)
		}
		if st.kind == "" && preparable(st.sql) {
			comparePrepared(t, st, conns, sides)
			prepared++
		}
		lockstep, mariadb := strings.Join(got[0], "\n"), strings.Join(got[1], "\n")
		switch st.kind {
		case "":
			if lockstep != mariadb && os.Getenv("LOCKSTEP_DIFF_ACCEPT") != "" {
				accept[st.line] = got[0]
			} else if lockstep != mariadb {
				t.Errorf("%s:%d: lockstep and MariaDB differ\n%s\n--- lockstep\n%s\n--- MariaDB\n%s",
					st.file, st.line, st.sql, lockstep, mariadb)
			}
		default:
			want := strings.Join(st.expect, "\n")
			if lockstep != want {
				t.Errorf("%s:%d: lockstep differs from the expected MySQL 8 outcome (%s: %s)\n%s\n--- lockstep\n%s\n--- expected\n%s\n--- MariaDB\n%s",
					st.file, st.line, st.kind, st.why, st.sql, lockstep, want, mariadb)
			}
			if st.kind == "mysql8" && lockstep == mariadb {
				t.Errorf("%s:%d: marked as a point where MariaDB differs from MySQL 8, but both give the same outcome: drop the mysql8: directive\n%s\n%s",
					st.file, st.line, st.sql, lockstep)
			}
		}
	}
	if len(accept) > 0 {
		if err := acceptOutcomes(filepath.Join("testdata", name+".sql"), accept); err != nil {
			t.Fatal(err)
		}
		t.Errorf("LOCKSTEP_DIFF_ACCEPT: %d differences written into %s.sql as lockstep: TODO directives", len(accept), name)
	}
	return prepared
}

// acceptOutcomes writes a "lockstep: TODO" directive with lockstep's outcome
// above each given statement line, for a person to give its reason (or turn
// into a mysql8: point) — the way to start a new corpus file.
func acceptOutcomes(path string, outcomes map[int][]string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.Split(string(data), "\n")
	var out []string
	for i, l := range lines {
		if o, ok := outcomes[i+1]; ok {
			out = append(out, "-- lockstep: TODO")
			for _, e := range o {
				out = append(out, "-- expect: "+e)
			}
		}
		out = append(out, l)
	}
	return os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o644)
}

// preparable reports a statement the prepared pass runs again: a SELECT
// (running it twice changes nothing).
func preparable(q string) bool {
	q = strings.TrimLeft(q, " \t\n(")
	return len(q) > 7 && strings.EqualFold(q[:7], "select ")
}

// comparePrepared runs st as a prepared statement on both servers and
// compares the outcomes: the binary protocol's rows, decoded, and
// everything else as for the text protocol.
func comparePrepared(t *testing.T, st statement, conns [2]*conn, sides [2]server) {
	t.Helper()
	var got [2][]string
	for i, c := range conns {
		o, err := c.prepared(st.sql)
		if err != nil {
			t.Fatalf("%s:%d on %s, prepared: %v\n%s", st.file, st.line, sides[i].name, err, st.sql)
		}
		got[i] = renderWithWarnings(t, st, c, sides[i], o)
	}
	if lockstep, mariadb := strings.Join(got[0], "\n"), strings.Join(got[1], "\n"); lockstep != mariadb {
		t.Errorf("%s:%d: prepared, lockstep and MariaDB differ\n%s\n--- lockstep\n%s\n--- MariaDB\n%s",
			st.file, st.line, st.sql, lockstep, mariadb)
	}
}

// renderWithWarnings renders o, st's outcome on c, with the warnings it
// raised (SHOW WARNINGS, when it reported any and they are compared).
func renderWithWarnings(t *testing.T, st statement, c *conn, side server, o *outcome) []string {
	t.Helper()
	var warnings [][]*string
	if o.warnings > 0 && !st.ignore["warnings"] {
		w, err := c.query("SHOW WARNINGS")
		if err != nil {
			t.Fatalf("%s:%d on %s: SHOW WARNINGS: %v", st.file, st.line, side.name, err)
		}
		warnings = w.rows
	}
	return render(st, o, warnings)
}
