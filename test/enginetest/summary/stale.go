package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"sort"
	"strconv"
	"strings"
)

// The "unexpectedly passed" check. A run with LOCKSTEP_ENGINETEST_NOSKIP=1
// (and LOCKSTEP_ENGINETEST_RECORD, for the texts) runs every skip-list entry;
// an entry whose tests all pass there is stale: the bug behind it was fixed
// (or the entry never failed) and the skip now hides a test that could
// fail. reportStale lists them; `summary -stale` exits 1 when there are any.
//
// An entry is checked when the run has a test it covers: a `tests` entry
// covers the test of that name and its subtests; a `texts` entry covers the
// tests whose name the recorded text makes. Entries the run has no test for
// (suites of another tier, setup statements, script names, entries marked
// crash, which stay skipped) are counted as unchecked.

// skipGroupEntries is one group of the skip list: its reason, texts and
// tests.
type skipGroupEntries struct {
	reason       string
	texts, tests []string
}

// timingDependent marks the reasons of groups the check leaves out: their
// tests pass or fail by the clock.
const timingDependent = "[harness] timing-dependent"

// skipEntries reads the groups of a skip-list file
// (test/enginetest/skiplist_test.go).
func skipEntries(path string) ([]skipGroupEntries, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		return nil, err
	}
	var groups []skipGroupEntries
	var perr error
	unquote := func(e ast.Expr) (string, bool) {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			perr = err
			return "", false
		}
		return s, true
	}
	ast.Inspect(f, func(n ast.Node) bool {
		cl, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		var g skipGroupEntries
		isGroup := false
		for _, e := range cl.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			key, ok := kv.Key.(*ast.Ident)
			if !ok {
				continue
			}
			switch key.Name {
			case "reason":
				isGroup = true
				g.reason, _ = unquote(kv.Value)
			case "texts", "tests":
				list, ok := kv.Value.(*ast.CompositeLit)
				if !ok {
					continue
				}
				for _, el := range list.Elts {
					if s, ok := unquote(el); ok {
						if key.Name == "texts" {
							g.texts = append(g.texts, s)
						} else {
							g.tests = append(g.tests, s)
						}
					}
				}
			}
		}
		if !isGroup {
			return true
		}
		groups = append(groups, g)
		return false
	})
	return groups, perr
}

// verdict is what a run says about one entry.
type verdict struct{ covered, failed bool }

// verdicts judges every entry of groups against rn.
func verdicts(rn *run, nm *names, groups []skipGroupEntries) (byText, byTest map[string]*verdict) {
	byText, byTest = map[string]*verdict{}, map[string]*verdict{}
	for _, g := range groups {
		for _, t := range g.texts {
			byText[t] = &verdict{}
		}
		for _, t := range g.tests {
			byTest[t] = &verdict{}
		}
	}
	for _, st := range rn.leaves() {
		if st.result == "skip" {
			continue // skipped by go-mysql-server itself, or a crash entry
		}
		bad := st.result != "pass"
		for name := st.name; name != ""; {
			if v := byTest[name]; v != nil {
				v.covered = true
				v.failed = v.failed || bad
			}
			i := strings.LastIndexByte(name, '/')
			if i < 0 {
				break
			}
			name = name[:i]
		}
		if nm != nil {
			if raw, ok := nm.text(st.name); ok {
				if v := byText[raw]; v != nil {
					v.covered = true
					v.failed = v.failed || bad
				}
			}
		}
	}
	return byText, byTest
}

// staleEntries returns the stale entries and how many entries rn does not
// cover. Entries are judged by group: a group's covered entries are stale
// when none of them failed. (One by one would be wrong both ways: a text
// may be a setup statement skipped for the statements after it, and in a
// run without skips a test may pass only because a statement before it that
// the skip list holds did run.)
func staleEntries(rn *run, nm *names, groups []skipGroupEntries) (stale []string, unchecked int) {
	byText, byTest := verdicts(rn, nm, groups)
	for _, g := range groups {
		n := len(g.texts) + len(g.tests)
		if strings.HasPrefix(g.reason, timingDependent) {
			unchecked += n
			continue
		}
		groupFailed := false
		for _, t := range g.texts {
			v := byText[t]
			groupFailed = groupFailed || v.failed
		}
		for _, t := range g.tests {
			groupFailed = groupFailed || byTest[t].failed
		}
		for _, t := range g.tests {
			switch v := byTest[t]; {
			case !v.covered:
				unchecked++
			case !groupFailed:
				stale = append(stale, t)
			}
		}
		for _, t := range g.texts {
			switch v := byText[t]; {
			case !v.covered:
				unchecked++
			case !groupFailed:
				stale = append(stale, t)
			}
		}
	}
	sort.Strings(stale)
	return stale, unchecked
}

// reportStale writes the stale entries of the skip list at path, given a
// no-skip run; it returns how many there are.
func reportStale(w io.Writer, rn *run, nm *names, path string) (int, error) {
	groups, err := skipEntries(path)
	if err != nil {
		return 0, err
	}
	total := 0
	for _, g := range groups {
		total += len(g.texts) + len(g.tests)
	}
	stale, unchecked := staleEntries(rn, nm, groups)
	for _, s := range stale {
		fmt.Fprintf(w, "unexpectedly passed (remove it from the skip list): %q\n", s)
	}
	fmt.Fprintf(w, "%d skip-list entries: %d checked, %d unexpectedly passed, %d not covered by this run\n",
		total, total-unchecked, len(stale), unchecked)
	return len(stale), nil
}
