package server

import (
	"strings"
	"time"

	"lockstep/internal/hist"
	"lockstep/internal/stat"
)

// Statement latency by kind (issue 34: "statement latency by kind"). Every
// command that runs a statement — COM_QUERY, each statement of a
// multi-statement text, COM_STMT_EXECUTE through the protocol layer or
// answered below it (execproto.go) — is timed from the handler's entry to
// its answer, and counted in the histogram of its kind: the statement's
// first keyword, as MySQL's statement events name it (statement/sql/select
// …), with BEGIN, START TRANSACTION, COMMIT and ROLLBACK together as
// "transaction" and everything else (DDL, SET, SHOW, CALL …) as "other".
// SHOW STATUS shows Lockstep_statement_latency_us_<kind>_{count,sum,le_*};
// the metrics endpoint lockstep_statement_latency_seconds{kind}. Per
// statement it costs two clock readings, a look at the first keyword and
// a histogram update (none of it under the nocounters build tag).

// stmtKinds are the kinds, in the order of stmtLatency.h.
var stmtKinds = []string{"select", "insert", "update", "delete", "transaction", "other"}

const kindOther = 5

// stmtLatencyBoundsMicros are the histograms' upper bounds (µs).
var stmtLatencyBoundsMicros = []int64{50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000}

// stmtLatency is a server's statement latency histograms.
type stmtLatency struct {
	h [6]*hist.Hist
}

func newStmtLatency() *stmtLatency {
	l := &stmtLatency{}
	for i := range l.h {
		l.h[i] = hist.New(stmtLatencyBoundsMicros...)
	}
	return l
}

// start is the time a statement began (zero under nocounters).
func (l *stmtLatency) start() time.Time {
	if !stat.On || l == nil {
		return time.Time{}
	}
	return time.Now()
}

// done counts the statement query that began at t0.
func (l *stmtLatency) done(query string, t0 time.Time) {
	if !stat.On || l == nil || t0.IsZero() {
		return
	}
	l.h[stmtKind(query)].Observe(time.Since(t0).Microseconds())
}

// status adds the histograms to SHOW STATUS.
func (l *stmtLatency) status(m map[string]int64) {
	for i, k := range stmtKinds {
		l.h[i].Snapshot().Status(m, "Lockstep_statement_latency_us_"+k)
	}
}

// stmtKind is the kind of statement text q: its first keyword after
// blanks, comments (/* */, --, #) and opening parentheses.
func stmtKind(q string) int {
	i := 0
	for i < len(q) {
		switch c := q[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '(' || c == ';':
			i++
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			end := strings.Index(q[i+2:], "*/")
			if end < 0 {
				return kindOther
			}
			i += 2 + end + 2
		case c == '#' || (c == '-' && i+2 < len(q) && q[i+1] == '-' && (q[i+2] == ' ' || q[i+2] == '\t')):
			end := strings.IndexByte(q[i:], '\n')
			if end < 0 {
				return kindOther
			}
			i += end + 1
		default:
			j := i
			for j < len(q) && (q[j]|0x20 >= 'a' && q[j]|0x20 <= 'z') {
				j++
			}
			return keywordKind(q[i:j])
		}
	}
	return kindOther
}

// keywordKind maps a first keyword (any case) to its kind.
func keywordKind(w string) int {
	var b [11]byte
	if len(w) > len(b) {
		return kindOther
	}
	for i := 0; i < len(w); i++ {
		b[i] = w[i] | 0x20
	}
	switch string(b[:len(w)]) {
	case "select", "with", "table", "values":
		return 0
	case "insert", "replace":
		return 1
	case "update":
		return 2
	case "delete":
		return 3
	case "begin", "start", "commit", "rollback":
		return 4
	}
	return kindOther
}
