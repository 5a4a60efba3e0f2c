package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestStaleEntries: a group is reported only when none of the entries the
// run covers failed; uncovered entries and timing-dependent groups are not
// judged.
func TestStaleEntries(t *testing.T) {
	skiplist := `package enginetest
var knownFailures = []skipGroup{
	{ // FIXED
		reason: "[bug] fixed by now",
		texts:  []string{"SELECT 1"},
		tests:  []string{"TestA/fixed"},
	},
	{ // STILL
		reason: "[bug] still failing",
		texts:  []string{"SELECT 2"},
		tests:  []string{"TestA/passes_alone", "TestA/broken"},
	},
	{ // OTHER
		reason: "[feature] another tier",
		tests:  []string{"TestB/never_run"},
	},
	{ // FLAKY
		reason: "[harness] timing-dependent: passes by the clock",
		tests:  []string{"TestA/clock"},
	},
}
`
	dir := t.TempDir()
	path := filepath.Join(dir, "skiplist_test.go")
	if err := os.WriteFile(path, []byte(skiplist), 0o644); err != nil {
		t.Fatal(err)
	}
	events := strings.Join([]string{
		`{"Action":"run","Test":"TestA"}`,
		`{"Action":"run","Test":"TestA/fixed"}`, `{"Action":"pass","Test":"TestA/fixed"}`,
		`{"Action":"run","Test":"TestA/SELECT_1"}`, `{"Action":"pass","Test":"TestA/SELECT_1"}`,
		`{"Action":"run","Test":"TestA/passes_alone"}`, `{"Action":"pass","Test":"TestA/passes_alone"}`,
		`{"Action":"run","Test":"TestA/broken"}`, `{"Action":"fail","Test":"TestA/broken"}`,
		`{"Action":"run","Test":"TestA/SELECT_2"}`, `{"Action":"pass","Test":"TestA/SELECT_2"}`,
		`{"Action":"run","Test":"TestA/clock"}`, `{"Action":"pass","Test":"TestA/clock"}`,
		`{"Action":"fail","Test":"TestA"}`,
	}, "\n")
	rn, err := read(strings.NewReader(events))
	if err != nil {
		t.Fatal(err)
	}
	nm := &names{byName: map[string]string{"SELECT_1": "SELECT 1", "SELECT_2": "SELECT 2"}, byNorm: map[string]string{}}
	groups, err := skipEntries(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 4 {
		t.Fatalf("%d groups read, want 4", len(groups))
	}
	stale, unchecked := staleEntries(rn, nm, groups)
	if want := []string{"SELECT 1", "TestA/fixed"}; !slices.Equal(stale, want) {
		t.Fatalf("stale %q, want %q", stale, want)
	}
	if unchecked != 2 { // TestB/never_run, TestA/clock
		t.Fatalf("unchecked %d, want 2", unchecked)
	}
}
