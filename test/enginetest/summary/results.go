package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// event is one line of `go test -json`.
type event struct {
	Action  string
	Test    string
	Output  string
	Elapsed float64
}

type testState struct {
	name    string
	result  string // pass, fail, skip, or "" (never finished)
	parent  bool   // has subtests
	output  []string
	elapsed float64
}

// run is one parsed `go test -json` stream.
type run struct {
	tests  map[string]*testState
	order  []string // first-seen order
	pkgOut []string // output not attributed to a test
}

func readFile(path string) (*run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(f)
}

func read(r io.Reader) (*run, error) {
	rn := &run{tests: map[string]*testState{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			continue
		}
		if e.Test == "" {
			if e.Action == "output" {
				rn.pkgOut = append(rn.pkgOut, e.Output)
			}
			continue
		}
		st := rn.tests[e.Test]
		if st == nil {
			st = &testState{name: e.Test}
			rn.tests[e.Test] = st
			rn.order = append(rn.order, e.Test)
			// The nearest ancestor that is a test is a parent. (Query
			// texts may contain "/", so not every prefix is a test.)
			for i := len(e.Test) - 1; i > 0; i-- {
				if e.Test[i] == '/' {
					if p := rn.tests[e.Test[:i]]; p != nil {
						p.parent = true
						break
					}
				}
			}
		}
		switch e.Action {
		case "pass", "fail", "skip":
			st.result = e.Action
			st.elapsed = e.Elapsed
		case "output":
			st.output = append(st.output, e.Output)
		}
	}
	return rn, sc.Err()
}

// leaves returns the tests without subtests, in order.
func (rn *run) leaves() []*testState {
	var out []*testState
	for _, name := range rn.order {
		if st := rn.tests[name]; !st.parent {
			out = append(out, st)
		}
	}
	return out
}

// firstError picks the most telling line of a failing test's output.
func firstError(out []string) string {
	var errLine, msgLine string
	for i, l := range out {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "Messages:") && msgLine == "":
			msgLine = strings.TrimSpace(strings.TrimPrefix(t, "Messages:"))
		case strings.HasPrefix(t, "Error:") && errLine == "":
			errLine = strings.TrimSpace(strings.TrimPrefix(t, "Error:"))
			// "Received unexpected error:" / "Not equal:" carry the detail on the next line.
			if i+1 < len(out) && strings.HasSuffix(errLine, ":") {
				errLine += " " + strings.TrimSpace(out[i+1])
			}
		case strings.HasPrefix(t, "panic:") && errLine == "":
			errLine = t
		}
	}
	switch {
	case errLine != "" && msgLine != "":
		return oneLine(errLine + " | " + msgLine)
	case errLine != "":
		return oneLine(errLine)
	case msgLine != "":
		return oneLine(msgLine)
	}
	return "(no error message)"
}

func oneLine(s string) string {
	return strings.ReplaceAll(s, "\n", " ")
}

// short truncates a message for display.
func short(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// names maps test names back to the texts the suites passed to
// SkipQueryTest (recorded with LOCKSTEP_ENGINETEST_RECORD).
type names struct {
	byName map[string]string // rewritten (as go test prints it) -> text
	byNorm map[string]string // text without whitespace -> text
}

func loadNames(path string) (*names, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw []string
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	n := &names{byName: map[string]string{}, byNorm: map[string]string{}}
	for _, r := range raw {
		if _, ok := n.byName[rewrite(r)]; !ok {
			n.byName[rewrite(r)] = r
		}
		n.byNorm[stripSpace(r)] = r
	}
	return n, nil
}

var dupSuffix = regexp.MustCompile(`#\d+$`)

// text finds the query text a test name is made of: first the longest
// suffix starting after a "/" whose rewritten form is a recorded text (the
// leaf's own query), then any "/"-delimited part of the name (a leaf below
// the query's subtest, e.g. "<query>/<query> join indexes").
func (n *names) text(name string) (string, bool) {
	name = dupSuffix.ReplaceAllString(name, "")
	var cuts []int
	for i := 0; i < len(name); i++ {
		if name[i] == '/' {
			cuts = append(cuts, i)
		}
	}
	for _, i := range cuts {
		if raw, ok := n.byName[name[i+1:]]; ok {
			return raw, true
		}
	}
	for k := len(cuts) - 1; k >= 0; k-- {
		for j := k + 1; j < len(cuts); j++ {
			if raw, ok := n.byName[dupSuffix.ReplaceAllString(name[cuts[k]+1:cuts[j]], "")]; ok {
				return raw, true
			}
		}
	}
	return "", false
}

// setupStatement finds the recorded statement in an "error running query
// <stmt>: <err>" message (a script's setup statement that failed).
// testify indents continuation lines, so whitespace is ignored.
func (n *names) setupStatement(output []string) (string, bool) {
	all := strings.Join(output, "")
	i := strings.Index(all, "error running query ")
	if i < 0 {
		return "", false
	}
	rest := stripSpace(all[i+len("error running query "):])
	// The statement ends at some ':'; try every one, longest match wins.
	best := ""
	for j := 0; j < len(rest); j++ {
		if rest[j] == ':' {
			if raw, ok := n.byNorm[rest[:j]]; ok {
				best = raw
			}
		}
	}
	return best, best != ""
}

func stripSpace(s string) string {
	return strings.Join(strings.Fields(s), "")
}

// rewrite mirrors how the testing package turns a subtest name into the
// name it reports (spaces become underscores, unprintable runes escaped).
func rewrite(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case isSpace(r):
			b.WriteByte('_')
		case !strconv.IsPrint(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isSpace(r rune) bool {
	if r < 0x2000 {
		switch r {
		case '\t', '\n', '\v', '\f', '\r', ' ', 0x85, 0xA0, 0x1680:
			return true
		}
		return false
	}
	if r <= 0x200a {
		return true
	}
	switch r {
	case 0x2028, 0x2029, 0x202f, 0x205f, 0x3000:
		return true
	}
	return false
}
