package main

import (
	"os"
	"regexp"
	"testing"

	"lockstep/internal/config"
)

// TestReadmeListsEveryOption: README.md's configuration table has a row
// for every option `lockstep serve --help` shows (--checkpoint-rate-limit
// was missing), and no row for an option that does not exist.
func TestReadmeListsEveryOption(t *testing.T) {
	text, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	// A row's first cell names one option or several (`--a`, `--b`).
	for _, cell := range regexp.MustCompile("(?m)^\\| (`--[^|]*)\\|").FindAllSubmatch(text, -1) {
		for _, m := range regexp.MustCompile("`--([a-z0-9-]+)`").FindAllSubmatch(cell[1], -1) {
			rows[string(m[1])] = true
		}
	}
	known := map[string]bool{"config": true}
	for _, k := range config.Keys {
		known[k] = true
		if !rows[k] {
			t.Errorf("README.md's option table has no row for --%s", k)
		}
	}
	for r := range rows {
		if !known[r] {
			t.Errorf("README.md's option table lists --%s, which is not an option", r)
		}
	}
}
