package enginetest

import (
	"encoding/json"
	"os"
	"sort"
	"sync"
)

// skipList is the set of go-mysql-server enginetest queries, statements,
// and script names that are known to fail against lockstep. Every entry
// carries the reason it is skipped; entries are grouped by cause in
// knownFailures (skiplist_test.go) so the reasons live next to them.
type skipList struct {
	reasons map[string]string // exact text -> reason

	mu   sync.Mutex
	seen map[string]struct{} // every text asked about (record mode)
}

// skipGroup is a set of skipped texts sharing one cause.
type skipGroup struct {
	reason string
	texts  []string
}

func newSkipList(groups ...skipGroup) *skipList {
	l := &skipList{reasons: map[string]string{}}
	for _, g := range groups {
		for _, q := range g.texts {
			l.reasons[q] = g.reason
		}
	}
	return l
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
	_, ok := l.reasons[q]
	return ok
}

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
