package server

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"lockstep/internal/config"
	logrec "lockstep/internal/record"
	"lockstep/internal/txlog"
)

// TestRecoverMixedEntries: a log whose entries hold groups of records (as a
// raft entry carries a commit group) and empty entries (raft's own, at a
// new term) recovers to the same data, and the server goes on from there:
// nothing takes a record's sequence number for its log index.
func TestRecoverMixedEntries(t *testing.T) {
	cfg := config.Default()
	cfg.Datadir = t.TempDir()
	cfg.CheckpointLogSize = 0
	var out bytes.Buffer
	s := openLocalTo(t, cfg, &out)
	s.exec("CREATE DATABASE d",
		"CREATE TABLE d.t (id INT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(10))",
		"INSERT INTO d.t (v) VALUES ('a'), ('b'), ('c')",
		"UPDATE d.t SET v = 'bb' WHERE id = 2",
		"CREATE USER u IDENTIFIED BY 'pw'",
		"DELETE FROM d.t WHERE id = 3",
		"CREATE TABLE d.u (k INT PRIMARY KEY)",
		"INSERT INTO d.u VALUES (1), (2)",
		"INSERT INTO d.t (v) VALUES ('d')",
	)
	wantRows := s.rowsString("SELECT id, v FROM d.t ORDER BY id")
	wantU := s.rowsString("SELECT k FROM d.u ORDER BY k")
	wantCatalog := s.catalogText()
	s.close()

	// The records the server logged, one per entry.
	l, _, err := txlog.Open(txlog.Options{Dir: filepath.Join(cfg.Datadir, "log")})
	if err != nil {
		t.Fatal(err)
	}
	ents, err := l.Read(l.FirstIndex(), l.LastIndex()+1, -1)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	var recs [][]byte
	for _, e := range ents {
		rs, err := logrec.EntryRecords(e.Payload)
		if err != nil || len(rs) != 1 {
			t.Fatalf("entry %d: %d records, %v", e.Index, len(rs), err)
		}
		recs = append(recs, append([]byte(nil), rs[0]...))
	}
	if len(recs) < 8 {
		t.Fatalf("only %d records", len(recs))
	}

	// The same records in another log: two empty entries first (so no
	// index is a sequence number), then groups of 1, 2, 3, ... records
	// with an empty entry after every group.
	dir2 := t.TempDir()
	l2, _, err := txlog.Open(txlog.Options{Dir: filepath.Join(dir2, "log")})
	if err != nil {
		t.Fatal(err)
	}
	payloads := [][]byte{{}, {}}
	for i, n := 0, 1; i < len(recs); n++ {
		j := min(i+n, len(recs))
		if j-i == 1 && n > 1 {
			payloads = append(payloads, recs[i])
		} else {
			payloads = append(payloads, logrec.AppendBatch(nil, recs[i:j]...))
		}
		payloads = append(payloads, []byte{})
		i = j
	}
	lsn, err := l2.Append(0, payloads...)
	if err != nil {
		t.Fatal(err)
	}
	if err := l2.WaitDurable(lsn); err != nil {
		t.Fatal(err)
	}
	if got := l2.LastIndex(); got == uint64(len(recs)) {
		t.Fatalf("the rewritten log ends at index %d, the number of records", got)
	}
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
	uuid, err := os.ReadFile(filepath.Join(cfg.Datadir, "auto.cnf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir2, "auto.cnf"), uuid, 0o640); err != nil {
		t.Fatal(err)
	}

	cfg2 := cfg
	cfg2.Datadir = dir2
	out.Reset()
	s = openLocalTo(t, cfg2, &out)
	check := func(when string) {
		t.Helper()
		if got := s.rowsString("SELECT id, v FROM d.t ORDER BY id"); got != wantRows {
			t.Errorf("%s: d.t = %s, want %s", when, got, wantRows)
		}
		if got := s.rowsString("SELECT k FROM d.u ORDER BY k"); got != wantU {
			t.Errorf("%s: d.u = %s, want %s", when, got, wantU)
		}
		if got := s.catalogText(); got != wantCatalog {
			t.Errorf("%s: catalog\n%s\nwant\n%s", when, got, wantCatalog)
		}
	}
	check("recovered from groups and empty entries")
	if c := recoveryComplaints(out.String()); len(c) != 0 {
		t.Errorf("recovery said %q", c)
	}
	if !strings.Contains(out.String(), "replayed "+itoa(len(recs))+" log records") {
		t.Errorf("recovery report:\n%s", out.String())
	}
	wantGTID := ":1-" + itoa(len(recs))
	if got := s.rowsString("SELECT @@gtid_executed"); !strings.Contains(got, wantGTID) {
		t.Errorf("@@gtid_executed = %s, want ...%s", got, wantGTID)
	}

	// The server goes on: its next sequence number and GNO follow the last
	// record's, its log index follows the last entry's.
	s.exec("INSERT INTO d.t (v) VALUES ('e')")
	wantRows = s.rowsString("SELECT id, v FROM d.t ORDER BY id")
	wantCatalog = s.catalogText()
	if !strings.Contains(wantRows, "[5 e]") {
		t.Errorf("after an insert: %s (the AUTO_INCREMENT counter came back wrong)", wantRows)
	}
	s.close()
	out.Reset()
	s = openLocalTo(t, cfg2, &out)
	check("restarted after one more commit")
	wantGTID = ":1-" + itoa(len(recs)+1)
	if got := s.rowsString("SELECT @@gtid_executed"); !strings.Contains(got, wantGTID) {
		t.Errorf("@@gtid_executed = %s, want ...%s", got, wantGTID)
	}
	s.close()
}

func itoa(n int) string { return strconv.Itoa(n) }
