package storage

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"

	"lockstep/internal/storage/rowenc"
)

// fullDesc exercises every field of the encoding.
func fullDesc() *TableDesc {
	return &TableDesc{
		Columns: []ColumnDesc{
			{Name: "id", Kind: KindInt, Unsigned: true, Type: "bigint unsigned"},
			{Name: "name", Kind: KindText, Nullable: true, Collation: sql.Collation_utf8mb4_general_ci, Type: "varchar(40) COLLATE utf8mb4_general_ci"},
			{Name: "blob", Kind: KindBinary, Nullable: true, Collation: sql.Collation_binary, Type: "blob"},
			{Name: "price", Kind: KindDecimal, Type: "decimal(10,2)"},
			{Name: "doc", Kind: KindJSON, Nullable: true, Type: "json"},
			{Name: "", Kind: KindNull, Nullable: true, Type: "null"},
		},
		PrimaryKey: []KeyPart{{Column: 0}, {Column: 1, Prefix: 3}},
		Indexes: []IndexDesc{
			{Name: "u_name", Unique: true, Parts: []KeyPart{{Column: 1}}},
			{Name: "k_mix", Parts: []KeyPart{{Column: 2, Prefix: 10}, {Column: 3}, {Column: 0}}},
		},
	}
}

func hiddenDesc() *TableDesc {
	d := fullDesc()
	d.PrimaryKey = nil
	d.Indexes = append(d.Indexes, IndexDesc{Name: "lockstep_row_content", Content: true})
	return d
}

func TestDescRoundTrip(t *testing.T) {
	for _, d := range []*TableDesc{fullDesc(), hiddenDesc(), {}, testDesc(kIndex("k", true), vIndex("v"))} {
		b := d.Marshal(nil)
		got, err := UnmarshalTableDesc(b)
		if err != nil {
			t.Fatalf("Unmarshal(Marshal(%+v)): %v", d, err)
		}
		if !got.Equal(d) || !d.Equal(got) {
			t.Fatalf("round trip:\n got  %+v\n want %+v", got, d)
		}
		if !bytes.Equal(got.Marshal(nil), b) {
			t.Fatal("re-encoding differs")
		}
		if c := d.Clone(); !c.Equal(d) {
			t.Fatal("Clone differs")
		}
	}
}

// TestDescEncodingPinned: the encoding is durable (checkpoints hold it);
// this pins version 1's bytes for a small descriptor.
func TestDescEncodingPinned(t *testing.T) {
	d := &TableDesc{
		Columns:    []ColumnDesc{{Name: "a", Kind: KindInt, Unsigned: true, Nullable: true, Type: "int"}, {Name: "b", Kind: KindText, Collation: 45, Type: "t"}},
		PrimaryKey: []KeyPart{{Column: 0}},
		Indexes:    []IndexDesc{{Name: "i", Unique: true, Parts: []KeyPart{{Column: 1, Prefix: 200}}}},
	}
	const want = "01" + "02" + "0161" + "01" + "03" + "00" + "03696e74" + "0162" + "05" + "00" + "2d" + "0174" +
		"01" + "0000" + "01" + "0169" + "01" + "01" + "01c801"
	if got := hexs(d.Marshal(nil)); got != want {
		t.Fatalf("encoding\n got  %s\n want %s", got, want)
	}
}

func hexs(b []byte) string {
	const digits = "0123456789abcdef"
	var s strings.Builder
	for _, c := range b {
		s.WriteByte(digits[c>>4])
		s.WriteByte(digits[c&15])
	}
	return s.String()
}

func TestDescUnmarshalRejects(t *testing.T) {
	good := fullDesc().Marshal(nil)
	cases := map[string][]byte{
		"empty":          nil,
		"version 2":      append([]byte{2}, good[1:]...),
		"truncated":      good[:len(good)-1],
		"trailing bytes": append(append([]byte(nil), good...), 0),
	}
	bad := func(mut func(d *TableDesc)) []byte {
		d := fullDesc()
		mut(d)
		return d.Marshal(nil)
	}
	cases["unknown kind"] = bad(func(d *TableDesc) { d.Columns[0].Kind = kindEnd })
	cases["invalid kind"] = bad(func(d *TableDesc) { d.Columns[0].Kind = KindInvalid })
	cases["unknown collation"] = bad(func(d *TableDesc) { d.Columns[1].Collation = 9999 })
	cases["unused collation id"] = bad(func(d *TableDesc) { d.Columns[1].Collation = 2000 })
	cases["pk column out of range"] = bad(func(d *TableDesc) { d.PrimaryKey[0].Column = 6 })
	cases["index column out of range"] = bad(func(d *TableDesc) { d.Indexes[1].Parts[2].Column = 99 })
	cases["index without parts"] = bad(func(d *TableDesc) { d.Indexes[0].Parts = nil })
	cases["content index with a primary key"] = bad(func(d *TableDesc) {
		d.Indexes = append(d.Indexes, IndexDesc{Name: "c", Content: true})
	})
	cases["content index not last"] = bad(func(d *TableDesc) {
		d.PrimaryKey = nil
		d.Indexes = append([]IndexDesc{{Name: "c", Content: true}}, d.Indexes...)
	})
	cases["unique content index"] = bad(func(d *TableDesc) {
		d.PrimaryKey = nil
		d.Indexes = append(d.Indexes, IndexDesc{Name: "c", Content: true, Unique: true})
	})
	for name, b := range cases {
		if d, err := UnmarshalTableDesc(b); err == nil || !errors.Is(err, ErrBadDesc) {
			t.Errorf("%s: Unmarshal = %+v, %v; want an ErrBadDesc error", name, d, err)
		}
	}
}

// FuzzUnmarshalTableDesc: any input decodes to a valid descriptor that
// re-encodes to the same bytes, or fails with ErrBadDesc; never a panic.
func FuzzUnmarshalTableDesc(f *testing.F) {
	f.Add(fullDesc().Marshal(nil))
	f.Add(hiddenDesc().Marshal(nil))
	f.Add((&TableDesc{}).Marshal(nil))
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := UnmarshalTableDesc(b)
		if err != nil {
			if !errors.Is(err, ErrBadDesc) {
				t.Fatalf("error %v does not wrap ErrBadDesc", err)
			}
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("decoded an invalid descriptor: %v", err)
		}
		if !bytes.Equal(d.Marshal(nil), b) {
			t.Fatalf("re-encoding differs:\n in  %x\n out %x", b, d.Marshal(nil))
		}
		// Keys of an arbitrary row never panic either.
		for i := range d.Indexes {
			_, _, _ = d.IndexKey(i, b)
		}
		_, _ = d.PrimaryKeyOf(b)
	})
}

// TestTableDesc: the table's descriptor follows its DDL, and keys come
// from it.
func TestTableDesc(t *testing.T) {
	e := newTestEngine(t)
	if _, err := e.NewTable("bad", &TableDesc{Columns: []ColumnDesc{{Name: "a"}}}); !errors.Is(err, ErrBadDesc) {
		t.Fatalf("NewTable with a bad descriptor: %v", err)
	}
	next := e.NextTableID()
	tb := newTable(e, "t", kIndex("k", true))
	if uint64(tb.ID()) != next {
		t.Fatalf("a failed NewTable used table id %d", next)
	}
	if got, _ := e.TableByID(uint64(tb.ID())); !got.Desc().Equal(testDesc(kIndex("k", true))) {
		t.Fatalf("Desc = %+v", got.Desc())
	}
	d := tb.Desc()
	d.Indexes[0].Name = "changed" // a copy: the table keeps its own
	if tb.IndexNames()[0] != "k" {
		t.Fatal("Desc is not a copy")
	}
	must(t, tb.AddIndex(vIndex("v")))
	if err := tb.AddIndex(IndexDesc{Name: "bad", Parts: []KeyPart{{Column: 5}}}); !errors.Is(err, ErrBadDesc) {
		t.Fatalf("AddIndex with a bad part: %v", err)
	}
	ver := tb.Version()
	must(t, tb.RenameIndex(1, "v2"))
	if tb.Version() != ver {
		t.Fatal("RenameIndex changed the version")
	}
	if want := testDesc(kIndex("k", true), vIndex("v2")); !tb.Desc().Equal(want) {
		t.Fatalf("Desc after AddIndex, RenameIndex = %+v", tb.Desc())
	}
	must(t, tb.DropIndex(0))
	if want := testDesc(vIndex("v2")); !tb.Desc().Equal(want) {
		t.Fatalf("Desc after DropIndex = %+v", tb.Desc())
	}
	if _, err := tb.PrimaryKeyOf(trow(1, "a")); !errors.Is(err, ErrNoPrimaryKey) {
		t.Fatalf("PrimaryKeyOf without a primary key: %v", err)
	}
	// A rewrite installs a new definition: here k becomes the primary key.
	nd := testDesc(vIndex("v2"))
	nd.PrimaryKey = []KeyPart{{Column: 0}}
	nd.Columns[0].Nullable = false
	must(t, tb.Rewrite(func(r []byte) ([]byte, error) { return r, nil }, nd))
	if !tb.Desc().Equal(nd) {
		t.Fatalf("Desc after Rewrite = %+v", tb.Desc())
	}
	if pk, err := tb.PrimaryKeyOf(trow(7, "a")); err != nil || !bytes.Equal(pk, tik(7)) {
		t.Fatalf("PrimaryKeyOf = %x, %v", pk, err)
	}
	if err := tb.Rewrite(func(r []byte) ([]byte, error) { return r, nil }, &TableDesc{Columns: []ColumnDesc{{Name: "x", Kind: 200}}}); !errors.Is(err, ErrBadDesc) {
		t.Fatalf("Rewrite with a bad descriptor: %v", err)
	}
	// Keys from the descriptor alone are the keys the table indexes by.
	if k, null, err := tb.Desc().IndexKey(0, trow(7, "abc")); err != nil || null || !bytes.Equal(k, tiv("abc")) {
		t.Fatalf("IndexKey = %x %v %v", k, null, err)
	}
	if _, _, err := tb.Desc().IndexKey(0, []byte{0xee}); !errors.Is(err, rowenc.ErrCorrupt) {
		t.Fatalf("IndexKey of garbage: %v", err)
	}
}
