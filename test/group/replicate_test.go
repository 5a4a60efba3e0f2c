package group

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestGroupReplicates: DDL, inserts with AUTO_INCREMENT, updates, deletes
// and account statements run on the primary reach both secondaries; a
// secondary refuses every kind of write with 1290 naming the primary's
// SQL address.
func TestGroupReplicates(t *testing.T) {
	c := startCluster(t)
	p := c.waitPrimary(0)
	t.Logf("primary: member %d", p.id)

	exec(t, p,
		"CREATE DATABASE shop",
		"CREATE TABLE shop.items (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(40) NOT NULL, qty INT NOT NULL, price DECIMAL(10,2), note TEXT, KEY (name))",
		"INSERT INTO shop.items (name, qty, price, note) VALUES ('apple', 10, 0.50, NULL), ('pear', 5, 0.75, 'ripe'), ('plum', 0, NULL, '')",
		"INSERT INTO shop.items (name, qty, price) VALUES ('fig', 3, 2.00)",
		"UPDATE shop.items SET qty = qty + 1, note = 'restocked' WHERE name IN ('apple', 'plum')",
		"DELETE FROM shop.items WHERE name = 'pear'",
		"ALTER TABLE shop.items ADD COLUMN origin VARCHAR(20) DEFAULT 'local'",
		"CREATE INDEX by_qty ON shop.items (qty)",
		"CREATE TABLE shop.scratch (k INT PRIMARY KEY)",
		"INSERT INTO shop.scratch VALUES (1), (2)",
		"DROP TABLE shop.scratch",
		"CREATE USER 'clerk'@'%' IDENTIFIED BY 'secret-1'",
		"GRANT SELECT, INSERT ON shop.* TO 'clerk'@'%'",
	)
	// A transaction of several statements, and a row the next
	// AUTO_INCREMENT value must skip past on every member.
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"INSERT INTO shop.items (id, name, qty) VALUES (100, 'kiwi', 7)",
		"UPDATE shop.items SET price = price * 2 WHERE price IS NOT NULL",
		"INSERT INTO shop.items (name, qty, origin) VALUES ('lime', 1, 'abroad')",
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("COMMIT: %v", err)
	}

	c.waitConverged()
	c.checkChecksums("after the writes on the primary")
	want := []string{
		"1 apple 11 1.00 restocked local",
		"3 plum 1 NULL restocked local",
		"4 fig 3 4.00 NULL local",
		"100 kiwi 7 NULL NULL local",
		"101 lime 1 NULL NULL abroad",
	}
	for _, m := range c.members {
		got := rowsOf(t, m, "SELECT id, name, qty, price, note, origin FROM shop.items ORDER BY id")
		if !slices.Equal(got, want) {
			t.Errorf("member %d: shop.items is\n  %s\nwant\n  %s", m.id, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
		if got := rowsOf(t, m, "SHOW TABLES FROM shop"); !slices.Equal(got, []string{"items"}) {
			t.Errorf("member %d: SHOW TABLES FROM shop = %v, want [items]", m.id, got)
		}
		if got := rowsOf(t, m, "SELECT INDEX_NAME FROM information_schema.statistics WHERE table_schema = 'shop' AND table_name = 'items' AND seq_in_index = 1 ORDER BY 1"); !slices.Equal(got, []string{"by_qty", "name", "PRIMARY"}) {
			t.Errorf("member %d: indexes of shop.items = %v, want [by_qty name PRIMARY]", m.id, got)
		}
		if got := rowsOf(t, m, "SELECT AUTO_INCREMENT FROM information_schema.tables WHERE table_schema = 'shop' AND table_name = 'items'"); !slices.Equal(got, []string{"102"}) {
			t.Errorf("member %d: next AUTO_INCREMENT of shop.items = %v, want 102", m.id, got)
		}
		if got := rowsOf(t, m, "SHOW GRANTS FOR 'clerk'@'%'"); !slices.Equal(got, []string{"GRANT USAGE ON *.* TO `clerk`@`%`", "GRANT SELECT, INSERT ON `shop`.* TO `clerk`@`%`"}) {
			t.Errorf("member %d: SHOW GRANTS FOR clerk = %q", m.id, got)
		}
		// The account's password reached the member too: clerk logs in.
		clerkLogin(t, m, "secret-1")
	}

	// Every kind of write on a secondary: 1290, naming the primary and the
	// SQL address clients reach it at (not its group address).
	name := fmt.Sprintf("the primary is member %d at %s", p.id, p.srv.Addr)
	for _, m := range c.members {
		if m == p {
			continue
		}
		for _, q := range []string{
			"INSERT INTO shop.items (name, qty) VALUES ('melon', 1)",
			"UPDATE shop.items SET qty = 0",
			"DELETE FROM shop.items WHERE id = 1",
			"CREATE TABLE shop.other (k INT PRIMARY KEY)",
			"ALTER TABLE shop.items ADD COLUMN extra INT",
			"DROP TABLE shop.items",
			"CREATE DATABASE elsewhere",
			"CREATE USER 'intruder'@'%'",
			"GRANT ALL ON *.* TO 'clerk'@'%'",
		} {
			_, err := m.db.ExecContext(ctx, q)
			if errno(err) != 1290 || !strings.Contains(err.Error(), name) {
				t.Errorf("member %d (secondary): %s: got %v, want error 1290 naming %q", m.id, q, err, name)
			}
		}
		// Reads are served.
		if got := rowsOf(t, m, "SELECT COUNT(*) FROM shop.items"); !slices.Equal(got, []string{"5"}) {
			t.Errorf("member %d: SELECT COUNT(*) = %v after the refused writes, want 5", m.id, got)
		}
	}
	// The refused writes changed nothing anywhere.
	c.waitConverged()
	c.checkChecksums("after the refused writes on the secondaries")
	for _, m := range c.members {
		if got := rowsOf(t, m, "SELECT COUNT(*) FROM mysql.user WHERE user = 'intruder'"); !slices.Equal(got, []string{"0"}) {
			t.Errorf("member %d: the refused CREATE USER left an account", m.id)
		}
	}
}

// rowsOf runs a query on m and returns each row's columns joined by
// spaces (NULL as NULL).
func rowsOf(t *testing.T, m *member, query string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	rows, err := m.db.QueryContext(ctx, query)
	if err != nil {
		t.Fatalf("member %d: %s: %v", m.id, query, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatalf("member %d: %s: %v", m.id, query, err)
		}
		parts := make([]string, len(cols))
		for i, v := range vals {
			parts[i] = "NULL"
			if v.Valid {
				parts[i] = v.String
			}
		}
		out = append(out, strings.Join(parts, " "))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("member %d: %s: %v", m.id, query, err)
	}
	return out
}

// clerkLogin checks that clerk can log in to m with password and read.
func clerkLogin(t *testing.T, m *member, password string) {
	t.Helper()
	db, err := sql.Open("mysql", fmt.Sprintf("clerk:%s@tcp(%s)/shop?timeout=5s", password, m.srv.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM items").Scan(&n); err != nil {
		t.Errorf("member %d: clerk cannot log in and read: %v", m.id, err)
	}
}
