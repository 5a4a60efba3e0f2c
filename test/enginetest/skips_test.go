package enginetest

import (
	"encoding/json"
	"os"
	"sort"
	"strings"
	"sync"
)

// skipList is the set of go-mysql-server enginetest queries, statements,
// and script names that are known to fail against lockstep. Every entry
// carries the reason it is skipped; entries are grouped by cause in
// knownFailures (skiplist_test.go) so the reasons live next to them.
type skipList struct {
	reasons map[string]string // exact text -> reason
	tests   map[string]string // Go test name (as go test prints it) -> reason
	crashes map[string]bool   // texts whose run would crash the test binary

	mu   sync.Mutex
	seen map[string]struct{} // every text asked about (record mode)
}

// skipGroup is a set of skipped texts sharing one cause.
//
// texts are queries, setup statements or script names exactly as the suites
// pass them to SkipQueryTest; they are skipped before they run. tests are
// Go test names as `go test` prints them (spaces turned into underscores),
// for the subtests of suites that never ask SkipQueryTest; they are
// skipped when their result or error is evaluated (see EvaluateQueryResults),
// and a listed name also covers its subtests.
type skipGroup struct {
	reason string
	texts  []string
	tests  []string
	crash  bool // always applied, even with LOCKSTEP_ENGINETEST_NOSKIP=1
}

func newSkipList(groups ...skipGroup) *skipList {
	l := &skipList{reasons: map[string]string{}, tests: map[string]string{}, crashes: map[string]bool{}}
	for _, g := range groups {
		for _, q := range g.texts {
			l.reasons[q] = g.reason
			if g.crash {
				l.crashes[q] = true
			}
		}
		for _, n := range g.tests {
			l.tests[n] = g.reason
		}
	}
	return l
}

// reasonFor returns why a query text or a Go test (or one of its ancestors)
// is skipped.
func (l *skipList) reasonFor(query, testName string) (string, bool) {
	if noSkips {
		return "", false
	}
	if r, ok := l.reasons[query]; ok && query != "" {
		return r, true
	}
	for name := testName; name != ""; {
		if r, ok := l.tests[name]; ok {
			return r, true
		}
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			break
		}
		name = name[:i]
	}
	return "", false
}

// skip reports whether q (a query, a setup statement or a script name) is
// a known failure. In record mode it also remembers q.
func (l *skipList) skip(q string) bool {
	if recordPath != "" {
		l.mu.Lock()
		if l.seen == nil {
			l.seen = map[string]struct{}{}
		}
		l.seen[q] = struct{}{}
		l.mu.Unlock()
	}
	if noSkips {
		return l.crashes[q]
	}
	_, ok := l.reasons[q]
	return ok
}

// noSkips (LOCKSTEP_ENGINETEST_NOSKIP=1) disables the skip list, except for
// the entries that would crash the test binary, to find entries that pass by
// now (and to regenerate the list).
var noSkips = os.Getenv("LOCKSTEP_ENGINETEST_NOSKIP") == "1"

// recordPath, when set (LOCKSTEP_ENGINETEST_RECORD=file), makes the run
// write every text the suites asked SkipQueryTest about to that file as a
// JSON array; `go run ./test/enginetest/summary -names file` uses it to turn
// failing test names back into the exact query texts for the skip list.
var recordPath = os.Getenv("LOCKSTEP_ENGINETEST_RECORD")

func (l *skipList) writeRecord() error {
	if recordPath == "" {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.seen))
	for q := range l.seen {
		out = append(out, q)
	}
	sort.Strings(out)
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(recordPath, b, 0o644)
}

// skips is the harness's skip list.
var skips = newSkipList(knownFailures...)
