package sqlfront

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"lockstep/internal/storage"
	"lockstep/internal/storage/rowenc"
	"lockstep/internal/txn"
)

// TestKeyGolden: the descriptor path reproduces the stored rows, primary
// keys and index keys the closure-based code produced (testdata/
// keys.golden). Keys come from the table's descriptor after a trip through
// its binary encoding, as an applier without the SQL layer would compute
// them; the table's own indexes hold the same keys.
func TestKeyGolden(t *testing.T) {
	f := loadKeyFixture(t)
	var got []string
	for _, name := range keyFixtureTables {
		te := fixtureEntry(t, f, name)
		desc, err := storage.UnmarshalTableDesc(te.store.Desc().Marshal(nil))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, goldenLine("table", name))
		pks, rows := storedRows(t, f, te)
		for i := range rows {
			got = append(got, goldenLine("row", pks[i], rows[i]))
			pk, err := desc.PrimaryKeyOf(rows[i])
			switch {
			case len(desc.PrimaryKey) == 0 && !errors.Is(err, storage.ErrNoPrimaryKey):
				t.Errorf("%s row %d: PrimaryKeyOf of a table without one: %x, %v", name, i, pk, err)
			case len(desc.PrimaryKey) > 0 && (err != nil || !bytes.Equal(pk, pks[i])):
				t.Errorf("%s row %d: PrimaryKeyOf %x, %v; stored %x", name, i, pk, err, pks[i])
			}
			if len(desc.PrimaryKey) > 0 {
				if pk2, err := te.store.PrimaryKeyOf(rows[i]); err != nil || !bytes.Equal(pk2, pks[i]) {
					t.Errorf("%s row %d: Table.PrimaryKeyOf %x, %v; stored %x", name, i, pk2, err, pks[i])
				}
			}
			for j, ix := range desc.Indexes {
				k, null, err := desc.IndexKey(j, rows[i])
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, goldenLine("key", j, ix.Name, null, k))
				if !indexHolds(t, f, te, j, k, pks[i]) {
					t.Errorf("%s index %s has no entry %x for row %x", name, ix.Name, k, pks[i])
				}
			}
		}
	}
	compareGolden(t, got)
}

// indexHolds reports whether index idx has an entry with key k for the row
// with primary key pk.
func indexHolds(t *testing.T, f *testFE, te *tableEntry, idx int, k, pk []byte) bool {
	t.Helper()
	tx := f.fe.store.Begin(txn.RepeatableRead)
	defer tx.Rollback()
	found := false
	err := tx.Scan(context.Background(), te.store, idx, storage.Range{Lo: k, Hi: rowenc.PrefixEnd(k)}, false, 0, func(p, _ []byte) (bool, error) {
		found = found || bytes.Equal(p, pk)
		return !found, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
