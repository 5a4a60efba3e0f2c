package sqlfront

import (
	"reflect"
	"testing"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

func TestSetAssignments(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"SET GLOBAL a = 1, b = 2", []string{"GLOBAL a = 1", "b = 2"}},
		{"set a = 'x,y', b = concat('p', ',') ;", []string{"a = 'x,y'", "b = concat('p', ',')"}},
		{"SET a = 'it''s, here', b = \"q\\\",\"", []string{"a = 'it''s, here'", "b = \"q\\\",\""}},
		{"SET /* c, d */ GLOBAL a = 1, /* e */ b = `x,y`", []string{"GLOBAL a = 1", "b = `x,y`"}},
		{"SET GLOBAL a = 1; SET b = 2, c = 3", []string{"GLOBAL a = 1"}},
		{"SET a = 'unterminated, b = 2", nil},
		{"SELECT 1, 2", nil},
	} {
		if got := setAssignments(tc.query); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("setAssignments(%q) = %q, want %q", tc.query, got, tc.want)
		}
	}
}

// TestCarrySetScope parses each statement and checks the scope every
// assignment ends up with.
func TestCarrySetScope(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  []ast.SetScope
	}{
		{"SET GLOBAL a = 1, b = 2", []ast.SetScope{"global", "global"}},
		{"SET SESSION a = 1, GLOBAL b = 2, c = 3", []ast.SetScope{"session", "global", "global"}},
		{"SET GLOBAL a = 1, @@session.b = 2, c = 3", []ast.SetScope{"global", "session", "global"}},
		{"SET @@global.a = 1, b = 2", []ast.SetScope{"global", ""}},
		{"SET GLOBAL a = 1, @x = 2, b = 3", []ast.SetScope{"global", "user", "global"}},
		{"SET a = 1, b = 2", []ast.SetScope{"", ""}},
		{"SET LOCAL a = 1, b = 2", []ast.SetScope{"session", "session"}},
		{"SET PERSIST a = 1, b = 2", []ast.SetScope{"persist", "persist"}},
		{"SET GLOBAL global_a = 1, global_b = 2", []ast.SetScope{"global", "global"}},
	} {
		stmt, err := ast.Parse(tc.query)
		if err != nil {
			t.Fatalf("parse %q: %v", tc.query, err)
		}
		set := stmt.(*ast.Set)
		if !maySetScopeList(tc.query) && len(tc.want) > 1 && tc.want[1] != "" {
			t.Fatalf("maySetScopeList(%q) = false", tc.query)
		}
		carrySetScope(tc.query, set)
		var got []ast.SetScope
		for _, e := range set.Exprs {
			got = append(got, e.Scope)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: scopes %q, want %q", tc.query, got, tc.want)
		}
	}
}
