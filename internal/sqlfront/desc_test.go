package sqlfront

import (
	"testing"

	"github.com/dolthub/go-mysql-server/sql"

	"lockstep/internal/storage"
)

// TestDescSurvivesCatalogRoundTrip: a table recreated from its catalog
// statement (SHOW CREATE TABLE, as a checkpoint stores it) gets a
// descriptor computing the same keys — after DDL too — and the descriptor
// follows every DDL that changes keys or names.
func TestDescSurvivesCatalogRoundTrip(t *testing.T) {
	f := loadKeyFixture(t)
	f.mustExec(f.ctx,
		"CREATE TABLE keyfix.alt (id INT PRIMARY KEY, a VARCHAR(20) COLLATE utf8mb4_bin, b INT, KEY ka (a(4)), UNIQUE KEY ub (b))",
		"INSERT INTO keyfix.alt VALUES (1, 'x', 1), (2, 'y', 2)",
		"ALTER TABLE keyfix.alt ADD COLUMN z INT FIRST",
		"ALTER TABLE keyfix.alt MODIFY COLUMN a VARCHAR(20) COLLATE utf8mb4_general_ci",
		"ALTER TABLE keyfix.alt RENAME INDEX ka TO ka2",
		"ALTER TABLE keyfix.alt CHANGE COLUMN b bb INT",
		"CREATE INDEX kz ON keyfix.alt (z, a)",
		"ALTER TABLE keyfix.alt DROP INDEX ub",
		"CREATE UNIQUE INDEX uba ON keyfix.nopk (b, a)",
	)
	alt := fixtureEntry(t, f, "alt").store.Desc()
	want := &storage.TableDesc{
		Columns:    alt.Columns,
		PrimaryKey: []storage.KeyPart{{Column: 1}},
		Indexes: []storage.IndexDesc{
			{Name: "ka2", Parts: []storage.KeyPart{{Column: 2, Prefix: 4}}},
			{Name: "kz", Parts: []storage.KeyPart{{Column: 0}, {Column: 2}}},
		},
	}
	if !alt.Equal(want) || alt.Columns[2].Collation != keyCollationOf(t, f, "alt", 2) || alt.Columns[3].Name != "bb" {
		t.Fatalf("descriptor after DDL:\n got  %+v\n want %+v", alt, want)
	}
	if nopk := fixtureEntry(t, f, "nopk").store.Desc(); len(nopk.Indexes) != 5 || !nopk.Indexes[4].Content || nopk.Indexes[3].Name != "uba" {
		t.Fatalf("the content index is not kept last: %+v", nopk.Indexes)
	}

	g := newTestFE(t)
	for _, name := range append(keyFixtureTables, "alt") {
		rows, err := f.query(f.ctx, "SHOW CREATE TABLE keyfix."+name)
		if err != nil {
			t.Fatal(err)
		}
		g.mustExec(g.ctx, "CREATE DATABASE IF NOT EXISTS keyfix", "USE keyfix", rows[0][1].(string))
		orig, again := fixtureEntry(t, f, name).store.Desc(), fixtureEntry(t, g, name).store.Desc()
		if !again.SameKeys(orig) || !again.Equal(orig) {
			t.Errorf("%s recreated from SHOW CREATE TABLE:\n got  %+v\n want %+v", name, again, orig)
		}
	}
}

// keyCollationOf is the key collation sqlfront gives column ord of table.
func keyCollationOf(t *testing.T, f *testFE, table string, ord int) sql.CollationID {
	t.Helper()
	m := fixtureEntry(t, f, table).load()
	return keyCollation(m.schema.Schema[ord].Type)
}
