package sqlfront

import (
	"strings"
	"testing"
	"time"
)

func TestSessionMark(t *testing.T) {
	st := ddlSession{queryTime: time.UnixMicro(1732350000123456), timeZone: "+05:00", sqlMode: "ANSI_QUOTES,STRICT_TRANS_TABLES"}
	logged := sessionMark(st) + "CREATE TABLE t (a INT)"
	rest, got, ok, err := cutSessionMark(logged)
	if err != nil || !ok || rest != "CREATE TABLE t (a INT)" || !got.queryTime.Equal(st.queryTime) || got.timeZone != st.timeZone || got.sqlMode != st.sqlMode {
		t.Fatalf("cutSessionMark(%q) = %q, %+v, %v, %v", logged, rest, got, ok, err)
	}
	// The character set fields: written when set, optional on reading
	// (marks written before them have none).
	cs := ddlSession{queryTime: time.UnixMicro(5), timeZone: "+00:00", charsetClient: "latin1", collationConnection: "latin1_swedish_ci"}
	if _, got, ok, err := cutSessionMark(sessionMark(cs) + "DROP TABLE t"); err != nil || !ok || got.charsetClient != "latin1" || got.collationConnection != "latin1_swedish_ci" {
		t.Fatalf("character set fields: %+v, %v, %v", got, ok, err)
	}
	if m := sessionMark(st); strings.Contains(m, "character_set_client") || strings.Contains(m, "collation_connection") {
		t.Fatalf("sessionMark wrote empty character set fields: %q", m)
	}
	// An empty sql_mode is a mode.
	if _, got, ok, err := cutSessionMark(sessionMark(ddlSession{timeZone: "SYSTEM"}) + "DROP TABLE t"); err != nil || !ok || got.sqlMode != "" {
		t.Fatalf("empty sql_mode: %+v, %v, %v", got, ok, err)
	}
	for _, tc := range []struct {
		logged  string
		ok      bool
		wantErr string
	}{
		{"CREATE TABLE t (a INT)", false, ""},
		{"/* lockstep: foreign_key_checks=0 */ CREATE TABLE t (a INT)", false, ""},
		{sessionMarkPrefix + "ts=1 time_zone=+00:00 sql_mode= CREATE TABLE t", false, "unterminated"},
		{sessionMarkPrefix + "ts=x time_zone=+00:00 sql_mode= */ DROP TABLE t", false, "ts"},
		{sessionMarkPrefix + "ts=1 sql_mode= */ DROP TABLE t", false, "required"},
		{sessionMarkPrefix + "ts=1 time_zone= sql_mode= */ DROP TABLE t", false, "empty time_zone"},
		{sessionMarkPrefix + "ts=1 time_zone=+00:00 sql_mode= color=red */ DROP TABLE t", false, "unknown field"},
	} {
		rest, _, ok, err := cutSessionMark(tc.logged)
		if ok != tc.ok || (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("cutSessionMark(%q) = ok %v, err %v; want ok %v, error containing %q", tc.logged, ok, err, tc.ok, tc.wantErr)
		}
		if !ok && rest != tc.logged {
			t.Errorf("cutSessionMark(%q) changed the text to %q", tc.logged, rest)
		}
	}
}

func TestSQLModeMark(t *testing.T) {
	for _, tc := range []struct {
		stmt, rest, mode string
		ok               bool
	}{
		{withSQLMode("ANSI_QUOTES", `CREATE VIEW "v" AS SELECT 1`), `CREATE VIEW "v" AS SELECT 1`, "ANSI_QUOTES", true},
		{withSQLMode("", "CREATE VIEW v AS SELECT 1"), "CREATE VIEW v AS SELECT 1", "", true},
		{"CREATE VIEW v AS SELECT 1", "CREATE VIEW v AS SELECT 1", "", false},
		{sqlModeMarkPrefix + "A B */ CREATE VIEW v AS SELECT 1", sqlModeMarkPrefix + "A B */ CREATE VIEW v AS SELECT 1", "", false},
	} {
		rest, mode, ok := cutSQLModeMark(tc.stmt)
		if rest != tc.rest || mode != tc.mode || ok != tc.ok {
			t.Errorf("cutSQLModeMark(%q) = %q, %q, %v; want %q, %q, %v", tc.stmt, rest, mode, ok, tc.rest, tc.mode, tc.ok)
		}
	}
}
