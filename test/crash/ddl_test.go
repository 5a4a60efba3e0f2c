package crash

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// ddlTable is a table made by DDL between rounds, as the test expects it.
type ddlTable struct {
	name    string
	round   int  // created before this round's workload
	rows    int  // ids 1..rows, v = name-id
	altered bool // has column w (7 for rows 1-2, id*10 for row 3) and index ddl_v
	alterAt int
}

// schema is what the DDL so far should have left in bank, and the
// accounts the account statements between rounds should have left.
type schema struct {
	live    []*ddlTable    // at most two
	dropped map[string]int // table -> round whose DDL dropped it
	users   []ddlUser      // at most two
}

// ddlUser is an account made between rounds: SELECT on bank.*, and the
// password hash it had when it was made.
type ddlUser struct {
	name, hash string
}

// ddl runs before the workload of every third round: it drops the older
// of two live tables, adds a column and an index to the newer one, and
// creates a new one, each statement autocommitted. (In those rounds
// failingDDL runs just before the kill.)
func (c *crashTest) ddl(conn *sql.Conn) {
	sc := &c.schema
	if len(sc.live) == 2 {
		old := sc.live[0]
		c.exec(conn, "DROP TABLE bank."+old.name)
		if sc.dropped == nil {
			sc.dropped = map[string]int{}
		}
		sc.dropped[old.name] = c.round
		sc.live = sc.live[1:]
	}
	if len(sc.live) == 1 {
		t := sc.live[0]
		c.exec(conn,
			"ALTER TABLE bank."+t.name+" ADD COLUMN w INT DEFAULT 7",
			"CREATE INDEX ddl_v ON bank."+t.name+" (v)",
			fmt.Sprintf("INSERT INTO bank.%s (id, v, w) VALUES (3, '%s-3', 30)", t.name, t.name))
		t.altered, t.alterAt, t.rows = true, c.round, 3
	}
	t := &ddlTable{name: fmt.Sprintf("ddl_r%d", c.round), round: c.round, rows: 2}
	c.exec(conn,
		"CREATE TABLE bank."+t.name+" (id INT PRIMARY KEY, v VARCHAR(20))",
		fmt.Sprintf("INSERT INTO bank.%s (id, v) VALUES (1, '%[1]s-1'), (2, '%[1]s-2')", t.name))
	sc.live = append(sc.live, t)

	// Accounts (logged as accounts records, carried by checkpoints).
	if len(sc.users) == 2 {
		c.exec(conn, "DROP USER '"+sc.users[0].name+"'@'%'")
		sc.users = sc.users[1:]
	}
	u := ddlUser{name: fmt.Sprintf("crash_r%d", c.round)}
	c.exec(conn,
		fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY 'pw-%d'", u.name, c.round),
		"GRANT SELECT ON bank.* TO '"+u.name+"'@'%'")
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	if err := conn.QueryRowContext(ctx, "SELECT authentication_string FROM mysql.user WHERE User = ?", u.name).Scan(&u.hash); err != nil || u.hash == "" {
		c.t.Fatalf("round %d (seed %d): %s's password hash: %q, %v", c.round, c.seed, u.name, u.hash, err)
	}
	sc.users = append(sc.users, u)
}

// failingDDL runs DDL statements that fail on the newest live table,
// while the workload runs, just before the kill (so that recovery replays
// them from the log, not from a checkpoint): some are refused before they
// change anything (they are not logged), some after (a failure mark
// follows them in the log). None may leave anything behind, and recovery
// must not complain of them (checkRecoveryReport).
func (c *crashTest) failingDDL(dsn string) {
	live := c.schema.live
	if len(live) == 0 {
		return
	}
	name := live[len(live)-1].name
	db, err := sql.Open("mysql", dsn+dsnTimeouts)
	if err != nil {
		c.t.Fatalf("sql.Open: %v", err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	for _, f := range []struct {
		errno uint16
		q     string
	}{
		{1050, "CREATE TABLE bank." + name + " (id INT PRIMARY KEY)"},
		{1051, "DROP TABLE bank.no_such_table"},
		// Refused while it rewrites the rows ('ddl_r1-1' is no INT).
		{1366, "ALTER TABLE bank." + name + " MODIFY COLUMN v INT"},
		// The table is made, then its key refused: undone at once.
		{3780, "CREATE TABLE bank." + name + "_bad (id INT PRIMARY KEY, a VARCHAR(5), FOREIGN KEY (a) REFERENCES bank.accounts (id))"},
	} {
		_, err := db.ExecContext(ctx, f.q)
		if got := errno(err); got != f.errno {
			c.t.Fatalf("round %d (seed %d): %s: %v, want error %d", c.round, c.seed, f.q, err, f.errno)
		}
	}
}

// checkRecoveryReport checks what a restarted server said while it
// recovered: nothing about DDL statements that failed (before failure
// marks, each failed statement printed "DDL failed again as when it was
// logged" at every start).
func (c *crashTest) checkRecoveryReport(stderr string) {
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, "failed again") || strings.Contains(line, "recovery: note:") ||
			strings.Contains(line, "failed when it ran") {
			c.t.Errorf("round %d (seed %d): recovery said: %s", c.round, c.seed, line)
		}
	}
}

// checkAccounts checks that the accounts made between rounds are there,
// exactly, with their password hashes and their grant.
func (c *crashTest) checkAccounts(ctx context.Context, conn *sql.Conn, p *problems) {
	got, err := column(ctx, conn, "User", "SELECT User FROM mysql.user WHERE User LIKE 'crash_%'")
	if err != nil {
		p.add("listing accounts: %v", err)
		return
	}
	var want []string
	for _, u := range c.schema.users {
		want = append(want, u.name)
		var hash, priv string
		if err := conn.QueryRowContext(ctx, "SELECT authentication_string FROM mysql.user WHERE User = ?", u.name).Scan(&hash); err != nil {
			p.add("account %s: %v", u.name, err)
			continue
		}
		if hash != u.hash {
			p.add("account %s: password hash %q, want %q", u.name, hash, u.hash)
		}
		if err := conn.QueryRowContext(ctx, "SELECT Select_priv FROM mysql.db WHERE User = ? AND Db = 'bank'", u.name).Scan(&priv); err != nil || priv != "Y" {
			p.add("account %s: SELECT on bank.*: %q, %v", u.name, priv, err)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		p.add("accounts %v, want %v", got, want)
	}
}

// checkTables checks that bank holds exactly accounts, transfers and the
// live DDL tables, and returns the tables it holds.
func (c *crashTest) checkTables(ctx context.Context, conn *sql.Conn, p *problems) []string {
	got, err := column(ctx, conn, "Tables_in_bank", "SHOW TABLES FROM bank")
	if err != nil {
		p.add("SHOW TABLES FROM bank: %v", err)
		return nil
	}
	want := []string{"accounts", "transfers"}
	for _, t := range c.schema.live {
		want = append(want, t.name)
	}
	for _, name := range want {
		if !slices.Contains(got, name) {
			p.add("table bank.%s is missing (SHOW TABLES: %v)", name, got)
		}
	}
	for _, name := range got {
		switch r, ok := c.schema.dropped[name]; {
		case ok:
			p.add("table bank.%s was dropped before round %d's workload but exists", name, r)
		case !slices.Contains(want, name):
			p.add("table bank.%s should not exist", name)
		}
	}
	return got
}

// checkDDLRows checks the columns, index and rows of each live DDL table
// found in tables (checkTables reported the others).
func (c *crashTest) checkDDLRows(ctx context.Context, conn *sql.Conn, tables []string, p *problems) {
	for _, t := range c.schema.live {
		if !slices.Contains(tables, t.name) {
			continue
		}
		what := fmt.Sprintf("bank.%s (created in round %d", t.name, t.round)
		wantCols := []string{"id", "v"}
		if t.altered {
			wantCols = append(wantCols, "w")
			what += fmt.Sprintf(", altered in round %d", t.alterAt)
		}
		what += ")"
		cols, err := column(ctx, conn, "Field", "SHOW COLUMNS FROM bank."+t.name)
		if err != nil {
			p.add("%s: SHOW COLUMNS: %v", what, err)
			continue
		}
		if !slices.Equal(cols, wantCols) {
			p.add("%s: columns %v, want %v", what, cols, wantCols)
			continue
		}
		keys, err := column(ctx, conn, "Key_name", "SHOW INDEX FROM bank."+t.name)
		if err != nil {
			p.add("%s: SHOW INDEX: %v", what, err)
		} else if slices.Contains(keys, "ddl_v") != t.altered {
			p.add("%s: indexes %v, want ddl_v: %v", what, keys, t.altered)
		}

		q := "SELECT CONCAT(id, ':', v) FROM bank." + t.name + " ORDER BY id"
		if t.altered {
			q = "SELECT CONCAT(id, ':', v, ':', COALESCE(w, 'NULL')) FROM bank." + t.name + " ORDER BY id"
		}
		got, err := column(ctx, conn, "", q)
		if err != nil {
			p.add("%s: %s: %v", what, q, err)
			continue
		}
		var want []string
		for id := 1; id <= t.rows; id++ {
			row := fmt.Sprintf("%d:%s-%d", id, t.name, id)
			if t.altered {
				w := 7
				if id == 3 {
					w = 30
				}
				row += fmt.Sprintf(":%d", w)
			}
			want = append(want, row)
		}
		if !slices.Equal(got, want) {
			p.add("%s: rows [%s], want [%s]", what, strings.Join(got, " "), strings.Join(want, " "))
		}
	}
}
