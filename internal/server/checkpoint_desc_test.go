package server

import (
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"

	"lockstep/internal/storage"
)

// TestCheckRestoredDesc: a table recreated from a checkpoint's catalog must
// compute the keys its checkpointed descriptor does; names and type texts
// may differ.
func TestCheckRestoredDesc(t *testing.T) {
	e := storage.New(storage.Options{PurgeInterval: -1})
	defer e.Close()
	desc := &storage.TableDesc{
		Columns: []storage.ColumnDesc{
			{Name: "id", Kind: storage.KindInt, Type: "int"},
			{Name: "s", Kind: storage.KindText, Nullable: true, Collation: sql.Collation_utf8mb4_general_ci, Type: "varchar(10)"},
		},
		PrimaryKey: []storage.KeyPart{{Column: 0}},
		Indexes:    []storage.IndexDesc{{Name: "ks", Parts: []storage.KeyPart{{Column: 1, Prefix: 3}}}},
	}
	tb, err := e.NewTable("t", desc)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkRestoredDesc(tb, nil); err != nil {
		t.Fatalf("no descriptor (format 1): %v", err)
	}
	renamed := desc.Clone()
	renamed.Columns[1].Name, renamed.Columns[1].Type, renamed.Indexes[0].Name = "S", "varchar(12)", "KS"
	if err := checkRestoredDesc(tb, renamed.Marshal(nil)); err != nil {
		t.Fatalf("names and types differ: %v", err)
	}
	for name, mut := range map[string]func(d *storage.TableDesc){
		"collation": func(d *storage.TableDesc) { d.Columns[1].Collation = sql.Collation_utf8mb4_bin },
		"prefix":    func(d *storage.TableDesc) { d.Indexes[0].Parts[0].Prefix = 4 },
		"unique":    func(d *storage.TableDesc) { d.Indexes[0].Unique = true },
		"pk":        func(d *storage.TableDesc) { d.PrimaryKey = append(d.PrimaryKey, storage.KeyPart{Column: 1}) },
	} {
		other := desc.Clone()
		mut(other)
		if err := checkRestoredDesc(tb, other.Marshal(nil)); err == nil || !strings.Contains(err.Error(), "other keys") {
			t.Errorf("%s differs: %v", name, err)
		}
	}
	if err := checkRestoredDesc(tb, []byte{9}); err == nil {
		t.Error("a damaged descriptor was accepted")
	}
}
