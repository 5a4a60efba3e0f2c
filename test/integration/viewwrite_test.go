package integration

import (
	"database/sql"
	"fmt"
	"testing"
)

// TestViewWritePreparedAndPrivileges: writes through views (sqlfront
// viewwrite.go) as server-side prepared statements, CHECK OPTION included
// (its condition is found again at EXECUTE, which is not parsed), and the
// privileges they need: the invoker's on the view (1142 without) and on the
// base table (lockstep is stricter than MySQL, which asks the definer).
// The differential corpus (testdata/viewwrite.sql) covers the rest.
func TestViewWritePreparedAndPrivileges(t *testing.T) {
	srv := startServer(t)
	e := newDatabase(t, srv)
	s := e.session("a")
	s.exec("CREATE TABLE t (id INT PRIMARY KEY, k INT)")
	s.exec("CREATE VIEW vc AS SELECT id AS x, k AS y FROM t WHERE k < 10 WITH CHECK OPTION")

	// Prepared: database/sql with arguments prepares on the server.
	ins, err := s.c.PrepareContext(s.ctx, "INSERT INTO vc (x, y) VALUES (?, ?)")
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	defer ins.Close()
	for i := 0; i < 2; i++ {
		if _, err := ins.ExecContext(s.ctx, 1+i, 5); err != nil {
			t.Fatalf("prepared insert through view: %v", err)
		}
		_, err := ins.ExecContext(s.ctx, 10+i, 50)
		expectErrno(t, err, 1369, "prepared insert failing the view's CHECK OPTION")
	}
	upd, err := s.c.PrepareContext(s.ctx, "UPDATE vc SET y = ? WHERE x = ?")
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	defer upd.Close()
	if _, err := upd.ExecContext(s.ctx, 7, 1); err != nil {
		t.Fatalf("prepared update through view: %v", err)
	}
	_, err = upd.ExecContext(s.ctx, 70, 1)
	expectErrno(t, err, 1369, "prepared update failing the view's CHECK OPTION")
	s.wantInts([]int64{107, 205}, "SELECT id * 100 + k FROM t ORDER BY id")

	// Privileges.
	s.exec("CREATE VIEW vt AS SELECT id, k FROM t")
	suffix := fmt.Sprint(dbSeq.Add(1))
	users := map[string]string{
		"vwb" + suffix: "GRANT SELECT, INSERT ON %[1]s.t TO %[2]s",                                            // base only
		"vwv" + suffix: "GRANT SELECT, INSERT ON %[1]s.vt TO %[2]s",                                           // view only
		"vwa" + suffix: "GRANT SELECT, INSERT ON %[1]s.vt TO %[2]s; GRANT SELECT, INSERT ON %[1]s.t TO %[2]s", // both
	}
	open := func(user string) *sql.DB {
		db, err := sql.Open("mysql", fmt.Sprintf("%s:pw@tcp(%s)/%s", user, srv.Addr, e.name))
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		t.Cleanup(func() { db.Close() })
		return db
	}
	for user, grants := range users {
		s.exec(fmt.Sprintf("CREATE USER %s IDENTIFIED BY 'pw'", user))
		t.Cleanup(func() { _, _ = e.db.Exec("DROP USER " + user) })
		for _, g := range splitStatements(fmt.Sprintf(grants, e.name, user)) {
			s.exec(g)
		}
	}
	for user, want := range map[string]uint16{"vwb" + suffix: 1142, "vwv" + suffix: 1142, "vwa" + suffix: 0} {
		_, err := open(user).ExecContext(s.ctx, "INSERT INTO vt VALUES (100, 1)")
		if want == 0 {
			if err != nil {
				t.Errorf("%s: insert through the view: %v", user, err)
			}
			continue
		}
		expectErrno(t, err, want, user+": insert through the view")
	}
}

// splitStatements splits "a; b" into its statements.
func splitStatements(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ';' {
			out = append(out, s[start:i])
			start = i + 2
		}
	}
	return append(out, s[start:])
}
