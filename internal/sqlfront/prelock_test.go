package sqlfront

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"

	"lockstep/internal/mdl"
)

// TestTriggerBodyTables: the tables a trigger body reads and writes, found
// in its stored text (prelock.go).
func TestTriggerBodyTables(t *testing.T) {
	cases := []struct {
		create string
		on     string
		event  int
		want   string // db.table:r|w(events), sorted
	}{
		{"CREATE TRIGGER a AFTER INSERT ON t FOR EACH ROW INSERT INTO lg (v) VALUES (NEW.id)", "t", evInsert,
			"d.lg:w1"},
		{"CREATE TRIGGER a BEFORE UPDATE ON t FOR EACH ROW SET NEW.k = (SELECT COUNT(*) FROM rd)", "t", evUpdate,
			"d.rd:r"},
		{"CREATE TRIGGER a AFTER DELETE ON t FOR EACH ROW BEGIN REPLACE INTO o.x SELECT * FROM y; IF OLD.k > 0 THEN DELETE FROM z WHERE id = OLD.id; END IF; END", "t", evDelete,
			"d.y:r d.z:w4 o.x:w5"},
		{"CREATE TRIGGER a AFTER INSERT ON t FOR EACH ROW UPDATE u JOIN v ON u.id = v.id SET u.k = 1", "t", evInsert,
			"d.u:w2 d.v:w2"},
		{"CREATE TRIGGER a AFTER INSERT ON t FOR EACH ROW DELETE a1 FROM u AS a1 JOIN v ON a1.id = v.id", "t", evInsert,
			"d.u:w4 d.v:r"},
		{"CREATE TRIGGER a AFTER INSERT ON t FOR EACH ROW INSERT INTO u VALUES (1) ON DUPLICATE KEY UPDATE k = k + 1", "t", evInsert,
			"d.u:w3"},
	}
	for _, c := range cases {
		def := sql.TriggerDefinition{Name: "a", CreateStatement: c.create}
		on, ev, uses, ok := triggerBodyTables(&def, "d")
		if !ok {
			t.Errorf("%s: did not parse", c.create)
			continue
		}
		var got []string
		for _, u := range uses {
			s := strings.ToLower(u.db + "." + u.name)
			if u.write {
				s += fmt.Sprintf(":w%d", u.events)
			} else {
				s += ":r"
			}
			got = append(got, s)
		}
		sort.Strings(got)
		if on != c.on || ev != c.event || strings.Join(got, " ") != c.want {
			t.Errorf("%s:\n got on=%s event=%d %s\nwant on=%s event=%d %s", c.create, on, ev, strings.Join(got, " "), c.on, c.event, c.want)
		}
	}
}

// TestPrelock: what LOCK TABLES ... WRITE of a table locks implicitly:
// its triggers' tables, its foreign key parents and children, transitively
// (prelock.go).
func TestPrelock(t *testing.T) {
	f := newTestFE(t)
	f.mustExec(f.ctx, "CREATE DATABASE d")
	f.ctx.SetCurrentDatabase("d")
	f.mustExec(f.ctx,
		"CREATE TABLE t (id INT PRIMARY KEY, k INT)",
		"CREATE TABLE lg (id INT PRIMARY KEY, v INT)",
		"CREATE TABLE lg2 (id INT PRIMARY KEY, v INT)",
		"CREATE TABLE rd (id INT PRIMARY KEY)",
		"CREATE TABLE del (id INT PRIMARY KEY)",
		"CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW INSERT INTO lg VALUES (NEW.id, 1)",
		"CREATE TRIGGER tr2 BEFORE UPDATE ON t FOR EACH ROW SET NEW.k = (SELECT COUNT(*) FROM rd)",
		"CREATE TRIGGER tr3 AFTER INSERT ON lg FOR EACH ROW INSERT INTO lg2 VALUES (NEW.id, 1)",
		"CREATE TRIGGER tr4 AFTER DELETE ON lg FOR EACH ROW DELETE FROM del",
		"CREATE TABLE p (id INT PRIMARY KEY)",
		"CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE)",
		"CREATE TABLE r (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id))",
		"CREATE TABLE c2 (id INT PRIMARY KEY, cid INT, FOREIGN KEY (cid) REFERENCES c (id) ON UPDATE SET NULL)",
		"CREATE TABLE gp (id INT PRIMARY KEY)",
		"CREATE TABLE pc (id INT PRIMARY KEY, gid INT, FOREIGN KEY (gid) REFERENCES gp (id))",
		"ALTER TABLE lg ADD COLUMN g INT, ADD FOREIGN KEY (g) REFERENCES gp (id)",
	)
	show := func(pre map[mdl.Key]*preLock) string {
		var out []string
		for k, pl := range pre {
			var modes []string
			for _, m := range pl.modes {
				modes = append(modes, m.String())
			}
			sort.Strings(modes)
			w := ""
			if pl.write {
				w = " write"
			}
			out = append(out, fmt.Sprintf("%s=%s%s", k.Table, strings.Join(modes, "+"), w))
		}
		sort.Strings(out)
		return strings.Join(out, " ")
	}
	cases := []struct {
		written string
		want    string
	}{
		// lg written by t's trigger: its insert trigger (lg2), not its
		// delete trigger (del); its parent gp.
		{"t", "gp=SHARED_READ_ONLY lg2=SHARED_WRITE write lg=SHARED_WRITE write rd=SHARED_READ"},
		{"lg", "del=SHARED_WRITE write gp=SHARED_READ_ONLY lg2=SHARED_WRITE write"},
		// The cascade child c and its SET NULL child c2; the RESTRICT child r.
		{"p", "c2=SHARED_NO_READ_WRITE write c=SHARED_NO_READ_WRITE write r=SHARED_READ_ONLY"},
		{"c", "c2=SHARED_NO_READ_WRITE write p=SHARED_READ_ONLY"},
		{"r", "p=SHARED_READ_ONLY"},
		{"rd", ""},
	}
	for _, c := range cases {
		got := show(f.fe.prelock(map[mdl.Key]int{mdlKey("d", c.written): evAll}))
		if got != c.want {
			t.Errorf("LOCK TABLES %s WRITE:\n got %s\nwant %s", c.written, got, c.want)
		}
	}
}
