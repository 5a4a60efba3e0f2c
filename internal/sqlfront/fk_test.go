package sqlfront

import (
	"strings"
	"testing"
)

// TestForeignKeyReplay checks how recovery replays DDL with foreign keys:
// a statement logged with foreign_key_checks=0 runs so again (a child
// before its parent), a statement that failed fails again and leaves no
// table, and the catalog a checkpoint takes recreates the keys in any
// table order.
func TestForeignKeyReplay(t *testing.T) {
	f := newTestFE(t)
	fe := f.fe
	replay := func(q string) error {
		t.Helper()
		replayErr, err := fe.ReplayDDL("d", q, fe.Storage().NextTableID())
		if err != nil {
			t.Fatalf("ReplayDDL(%q): %v", q, err)
		}
		return replayErr
	}
	if err := replay("CREATE DATABASE d"); err != nil {
		t.Fatal(err)
	}
	child := "CREATE TABLE c (id INT PRIMARY KEY, pid INT, CONSTRAINT fk FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE)"
	if err := replay(child); err == nil {
		t.Fatalf("%s replayed with foreign_key_checks=1 succeeded without its parent", child)
	}
	if err := replay(fkChecksOffMark + child); err != nil {
		t.Fatalf("replay with the foreign_key_checks=0 mark: %v", err)
	}
	if err := replay("CREATE TABLE p (id INT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	if err := replay("CREATE TABLE bad (id INT PRIMARY KEY, pid VARCHAR(5), FOREIGN KEY (pid) REFERENCES p (id))"); err == nil {
		t.Fatal("a CREATE TABLE with incompatible key columns replayed without error")
	}
	d, _ := fe.provider.Database(f.ctx, "d")
	if _, ok, _ := d.(*Database).GetTableInsensitive(f.ctx, "bad"); ok {
		t.Fatal("the failed CREATE TABLE left its table behind")
	}

	// The checkpoint's catalog: c (lower durable id) before p, with its key.
	items, err := fe.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	var stmts []string
	for _, it := range items {
		stmts = append(stmts, it.SQL)
	}
	all := strings.Join(stmts, "\n")
	if !strings.Contains(all, "CONSTRAINT `fk` FOREIGN KEY (`pid`) REFERENCES `p` (`id`) ON DELETE CASCADE") {
		t.Fatalf("catalog lacks the key:\n%s", all)
	}
	fe2 := newTestFE(t).fe
	for _, it := range items {
		if err := fe2.RunCatalogSQL(it.Database, it.SQL); err != nil {
			t.Fatalf("loading %q: %v", it.SQL, err)
		}
	}
	ctx := fe2.NewLocalContext(f.ctx)
	ctx.SetCurrentDatabase("d")
	if _, err := fe2.queryRows(ctx, "INSERT INTO c VALUES (1, 1)"); err == nil || !strings.Contains(err.Error(), "child row") {
		t.Fatalf("orphan insert after loading the catalog: %v, want a foreign key error", err)
	}
}
