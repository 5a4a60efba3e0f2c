package checkpoint

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func write(t *testing.T, dir string, seq int64, rows int) string {
	t.Helper()
	w, err := Create(dir, Header{Seq: seq, GTID: fmt.Sprintf("u:1-%d", seq)}, Options{FsyncThreshold: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	must(t, w.SQL(Statement{SQL: "CREATE DATABASE d"}))
	must(t, w.SQL(Statement{Database: "d", SQL: "CREATE TABLE t (id INT PRIMARY KEY)"}))
	must(t, w.Table(Table{ID: 1, Version: 3, Desc: []byte("descriptor")}))
	for i := 0; i < rows; i++ {
		must(t, w.Row([]byte(fmt.Sprintf("pk%05d", i)), []byte(fmt.Sprintf("row%d", i))))
	}
	must(t, w.Accounts([]byte("accounts\x00data")))
	p, err := w.Commit()
	must(t, err)
	return p
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestRoundTripAndLatest(t *testing.T) {
	dir := t.TempDir()
	if p, err := Latest(dir); err != nil || p != "" {
		t.Fatalf("Latest of an empty dir: %q, %v", p, err)
	}
	write(t, dir, 9, 3)
	p := write(t, dir, 10, 1000)
	// A leftover temporary file (a crash mid-checkpoint) is ignored and removed.
	tmp := filepath.Join(dir, "checkpoint-00000000000000000011.ckpt.tmp")
	must(t, os.WriteFile(tmp, []byte("partial"), 0o600))
	if got, err := Latest(dir); err != nil || got != p {
		t.Fatalf("Latest = %q, %v; want %q", got, err, p)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Fatal("temporary file not removed")
	}
	if seq, ok := SeqOf(p); !ok || seq != 10 {
		t.Fatalf("SeqOf = %d, %v", seq, ok)
	}
	var sqls []Statement
	var tables []Table
	var accounts []string
	rows := 0
	h, err := Read(p, Visitor{
		Accounts: func(b []byte) error { accounts = append(accounts, string(b)); return nil },
		SQL:      func(s Statement) error { sqls = append(sqls, s); return nil },
		Table:    func(tb Table) error { tables = append(tables, tb); return nil },
		Row: func(pk, row []byte) error {
			if want := fmt.Sprintf("pk%05d", rows); string(pk) != want {
				return fmt.Errorf("row %d pk %q", rows, pk)
			}
			rows++
			return nil
		},
	})
	must(t, err)
	if h.Seq != 10 || h.GTID != "u:1-10" || len(sqls) != 2 || sqls[1].Database != "d" || len(tables) != 1 || tables[0].Version != 3 || string(tables[0].Desc) != "descriptor" || rows != 1000 ||
		len(accounts) != 1 || accounts[0] != "accounts\x00data" {
		t.Fatalf("read back %+v %v %v %d %q", h, sqls, tables, rows, accounts)
	}
	must(t, RemoveOlder(dir, p))
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("after RemoveOlder: %d files", len(ents))
	}
}

func TestDamageIsDetected(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, 5, 50)
	good, err := os.ReadFile(p)
	must(t, err)
	cases := map[string][]byte{
		"truncated":    good[:len(good)-3],
		"no end frame": good[:len(good)-8],
		"flipped byte": func() []byte { b := append([]byte(nil), good...); b[len(b)/2] ^= 0x40; return b }(),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			must(t, os.WriteFile(p, b, 0o600))
			if _, err := Read(p, Visitor{}); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Read of a damaged file: %v", err)
			}
		})
	}
}

// TestReadsVersion1: a version 1 file (table frames without descriptors)
// still loads; its tables have no descriptor.
func TestReadsVersion1(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "checkpoint-00000000000000000007.ckpt")
	f, err := os.Create(p)
	must(t, err)
	w := &Writer{f: f, w: bufio.NewWriter(f)}
	w.frame(frameHeader, appendString(binary.AppendUvarint(append([]byte(magic), 1), 7), "u:1-7"))
	w.frame(frameSQL, appendString(appendString(nil, ""), "CREATE DATABASE d"))
	w.frame(frameTable, binary.AppendUvarint(binary.AppendUvarint(nil, 4), 2))
	w.frame(frameRow, append(appendString(nil, "pk"), "row"...))
	w.frame(frameEnd, binary.AppendUvarint(binary.AppendUvarint(nil, 1), 1))
	must(t, w.w.Flush())
	must(t, f.Close())
	must(t, w.err)
	var tables []Table
	h, err := Read(p, Visitor{Table: func(tb Table) error { tables = append(tables, tb); return nil }})
	must(t, err)
	if h.Seq != 7 || len(tables) != 1 || tables[0].ID != 4 || tables[0].Version != 2 || tables[0].Desc != nil {
		t.Fatalf("read back %+v %+v", h, tables)
	}

	// An accounts frame belongs to version 3 on: in a version 1 file it is
	// damage.
	f, err = os.Create(p)
	must(t, err)
	w = &Writer{f: f, w: bufio.NewWriter(f)}
	w.frame(frameHeader, appendString(binary.AppendUvarint(append([]byte(magic), 1), 7), "u:1-7"))
	w.frame(frameAcct, []byte("x"))
	w.frame(frameEnd, binary.AppendUvarint(binary.AppendUvarint(nil, 0), 0))
	must(t, w.w.Flush())
	must(t, f.Close())
	if _, err := Read(p, Visitor{}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("accounts frame in a version 1 file: %v", err)
	}
}

// TestHeaderRaft: a group member's checkpoint header keeps the raft index,
// term and membership it was written with (format version 4); a
// standalone one reads them as zero.
func TestHeaderRaft(t *testing.T) {
	for _, want := range []Header{
		{Seq: 7, GTID: "u:1-7", Index: 1234, Term: 5, Conf: []byte{1, 2, 3}},
		{Seq: 9, GTID: "u:1-9"},
	} {
		dir := t.TempDir()
		w, err := Create(dir, want, Options{})
		if err != nil {
			t.Fatal(err)
		}
		path, err := w.Commit()
		if err != nil {
			t.Fatal(err)
		}
		got, err := Read(path, Visitor{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Seq != want.Seq || got.GTID != want.GTID || got.Index != want.Index || got.Term != want.Term || string(got.Conf) != string(want.Conf) {
			t.Fatalf("header %+v, want %+v", got, want)
		}
	}
}
