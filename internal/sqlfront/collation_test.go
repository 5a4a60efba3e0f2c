package sqlfront

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
)

// recordingLogger keeps the DDL texts a Frontend logs (a failure as its
// mark's text).
type recordingLogger struct{ texts []string }

func (r *recordingLogger) LogDDL(_, query string, _ uint64) (int64, error) {
	r.texts = append(r.texts, query)
	return int64(len(r.texts)), nil
}

func (r *recordingLogger) LogDDLFailed(index int64, _ uint64) {
	r.texts = append(r.texts, FailedDDLMark(index))
}

// TestDefaultCollationReplay: databases are created with collation_server
// (MySQL 8's utf8mb4_0900_ai_ci by default, any other a session sets), the
// DDL log carries it, and replay creates each database with the collation
// it was created with — utf8mb4_0900_bin for a record logged before the
// mark existed.
func TestDefaultCollationReplay(t *testing.T) {
	f := newTestFE(t)
	rec := &recordingLogger{}
	f.fe.SetDDLLogger(rec)
	ctx := f.session()
	for _, q := range []string{
		"CREATE DATABASE ci",
		"SET SESSION collation_server = 'utf8mb4_0900_bin'",
		"CREATE DATABASE bin",
		"SET SESSION collation_server = 'latin1_swedish_ci'",
		"CREATE DATABASE latin",
	} {
		if _, err := f.query(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		ctx.Session.(*Session).CommandEnd() // as the protocol handler does
	}
	want := map[string]sql.CollationID{
		"ci":    sql.Collation_utf8mb4_0900_ai_ci,
		"bin":   sql.Collation_utf8mb4_0900_bin,
		"latin": sql.Collation_latin1_swedish_ci,
	}
	check := func(fe *Frontend, when string, want map[string]sql.CollationID) {
		t.Helper()
		for name, coll := range want {
			d, err := fe.provider.Database(f.ctx, name)
			if err != nil {
				t.Fatalf("%s: database %s: %v", when, name, err)
			}
			if got := d.(*Database).GetCollation(f.ctx); got != coll {
				t.Errorf("%s: database %s has %s, want %s", when, name, got, coll)
			}
		}
	}
	check(f.fe, "as created", want)
	if len(rec.texts) != 3 {
		t.Fatalf("logged %d DDL texts, want 3: %q", len(rec.texts), rec.texts)
	}
	if got, mark := rec.texts[0], collationMark(DefaultCollation)+sessionMarkPrefix; !strings.HasPrefix(got, mark) || !strings.HasSuffix(got, " */ CREATE DATABASE ci") {
		t.Fatalf("logged %q, want %q, a session mark, then the statement", got, mark)
	}

	// Replay on a new server, and a record from before the mark.
	fe2 := newTestFE(t).fe
	for _, q := range append(rec.texts, "CREATE DATABASE legacy") {
		if replayErr, err := fe2.ReplayDDL("", q, fe2.Storage().NextTableID()); err != nil || replayErr != nil {
			t.Fatalf("ReplayDDL(%q): %v, %v", q, err, replayErr)
		}
	}
	want["legacy"] = sql.Collation_utf8mb4_0900_bin
	check(fe2, "after replay", want)

	// Marks compose: collation first, then foreign_key_checks.
	for _, c := range []struct{ logged, q, coll string }{
		{collationMark("utf8mb4_0900_ai_ci") + fkChecksOffMark + "CREATE TABLE t (a INT)", fkChecksOffMark + "CREATE TABLE t (a INT)", "utf8mb4_0900_ai_ci"},
		{"CREATE TABLE t (a INT)", "CREATE TABLE t (a INT)", ""},
		{collationMarkPrefix + "x y */ CREATE TABLE t (a INT)", collationMarkPrefix + "x y */ CREATE TABLE t (a INT)", ""},
	} {
		q, coll := cutCollationMark(c.logged)
		if q != c.q || coll != c.coll {
			t.Errorf("cutCollationMark(%q) = %q, %q; want %q, %q", c.logged, q, coll, c.q, c.coll)
		}
	}
}

// TestCollationServerOption: Options.CollationServer sets the server's
// default; an unknown collation is refused.
func TestCollationServerOption(t *testing.T) {
	fe, err := New(Options{CollationServer: "utf8mb4_0900_bin"})
	if err != nil {
		t.Fatal(err)
	}
	defer fe.Close()
	f := &testFE{t: t, fe: fe, ctx: fe.NewLocalContext(t.Context())}
	rows, err := f.query(f.session(), "SELECT @@collation_server, @@global.collation_server, @@collation_connection")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0][0] != "utf8mb4_0900_bin" || rows[0][1] != "utf8mb4_0900_bin" || rows[0][2] != "utf8mb4_0900_bin" {
		t.Fatalf("got %v", rows)
	}
	d := newTestFE(t)
	rows, err = d.query(d.session(), "SELECT @@collation_server, @@global.collation_server, @@collation_connection")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0][0] != DefaultCollation || rows[0][1] != DefaultCollation || rows[0][2] != DefaultCollation {
		t.Fatalf("default server: got %v", rows)
	}
	if _, err := New(Options{CollationServer: "no_such_collation"}); err == nil {
		t.Fatal("an unknown collation was accepted")
	}
}

// TestWeigher: the ASCII-table weigher gives go-mysql-server's weights.
func TestWeigher(t *testing.T) {
	for _, c := range []sql.CollationID{sql.Collation_utf8mb4_0900_ai_ci, sql.Collation_utf8mb4_0900_bin,
		sql.Collation_utf8mb4_general_ci, sql.Collation_utf8mb4_bin, sql.Collation_utf8mb4_0900_as_cs} {
		for _, s := range []string{"", "Alice", "alice ", "Émile", "straße", "日本語", "a😀b", strings.Repeat("xY", 100)} {
			var want bytes.Buffer
			if err := c.WriteWeightString(&want, s); err != nil {
				t.Fatal(err)
			}
			got, err := weigherFor(c).append(nil, s)
			if err != nil || !bytes.Equal(got, want.Bytes()) {
				t.Errorf("%s %q: %x, %v; want %x", c, s, got, err, want.Bytes())
			}
		}
	}
	if _, err := weigherFor(sql.Collation_utf8mb4_0900_ai_ci).append(nil, "a\xffb"); err == nil {
		t.Error("a malformed string was weighed")
	}
}
