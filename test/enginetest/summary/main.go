// Command summary reads `go test -json` output of ./test/enginetest from
// stdin and prints per-suite counts of passed, failed and skipped tests.
//
// Only leaf tests are counted (a script with three assertions counts as
// three tests); a suite is a top-level Test function.
//
//	go test -json ./test/enginetest/ | go run ./test/enginetest/summary
//
// Flags:
//
//	-failures      also list every failing leaf test with its first error line
//	-names FILE    with -failures: FILE is the JSON array written by a run with
//	               LOCKSTEP_ENGINETEST_RECORD=FILE; failing tests are printed as
//	               the exact query texts the skip list needs (Go string literals)
//	-md            print the counts as a Markdown table
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
)

type event struct {
	Action  string
	Test    string
	Output  string
	Elapsed float64
}

type testState struct {
	name     string
	result   string // pass, fail, skip, or "" (never finished)
	parent   bool   // has subtests
	output   []string
	elapsed  float64
	sequence int
}

func main() {
	failures := flag.Bool("failures", false, "list failing leaf tests")
	namesFile := flag.String("names", "", "record file (LOCKSTEP_ENGINETEST_RECORD) mapping test names to query texts")
	md := flag.Bool("md", false, "print counts as a Markdown table")
	flag.Parse()

	tests, order, pkgOut, err := read(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "summary:", err)
		os.Exit(2)
	}

	type counts struct{ pass, fail, skip, unfinished int }
	suites := map[string]*counts{}
	var suiteOrder []string
	elapsed := map[string]float64{}
	for _, name := range order {
		st := tests[name]
		suite, _, _ := strings.Cut(name, "/")
		c := suites[suite]
		if c == nil {
			c = &counts{}
			suites[suite] = c
			suiteOrder = append(suiteOrder, suite)
		}
		if name == suite {
			elapsed[suite] = st.elapsed
		}
		if st.parent && name != suite {
			continue
		}
		if st.parent && name == suite {
			continue
		}
		switch st.result {
		case "pass":
			c.pass++
		case "fail":
			c.fail++
		case "skip":
			c.skip++
		default:
			c.unfinished++
		}
	}

	var total counts
	if *md {
		fmt.Println("| Suite | Passed | Failed | Skipped | Time (s) |")
		fmt.Println("|---|---:|---:|---:|---:|")
	} else {
		fmt.Printf("%-48s %7s %7s %7s %9s\n", "SUITE", "PASS", "FAIL", "SKIP", "TIME(s)")
	}
	for _, s := range suiteOrder {
		c := suites[s]
		total.pass += c.pass
		total.fail += c.fail
		total.skip += c.skip
		total.unfinished += c.unfinished
		if *md {
			fmt.Printf("| %s | %d | %d | %d | %.1f |\n", s, c.pass, c.fail, c.skip, elapsed[s])
		} else {
			fmt.Printf("%-48s %7d %7d %7d %9.1f", s, c.pass, c.fail, c.skip, elapsed[s])
			if c.unfinished > 0 {
				fmt.Printf("  (%d did not finish)", c.unfinished)
			}
			fmt.Println()
		}
	}
	if *md {
		fmt.Printf("| **total** | **%d** | **%d** | **%d** | |\n", total.pass, total.fail, total.skip)
	} else {
		fmt.Printf("%-48s %7d %7d %7d\n", "TOTAL", total.pass, total.fail, total.skip)
	}
	if total.unfinished > 0 {
		fmt.Printf("\n%d tests did not finish (panic or timeout); last package output:\n", total.unfinished)
		for _, l := range lastLines(pkgOut, 15) {
			fmt.Print("  ", l)
		}
	}

	if !*failures {
		return
	}
	var names map[string]string // rewritten name -> raw text
	if *namesFile != "" {
		names, err = loadNames(*namesFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "summary:", err)
			os.Exit(2)
		}
	}
	fmt.Println()
	for _, name := range order {
		st := tests[name]
		if st.parent || (st.result != "fail" && st.result != "") {
			continue
		}
		msg := firstError(st.output)
		if names != nil {
			raw, ok := rawText(name, names)
			if ok {
				fmt.Printf("%s, // %s: %s\n", strconv.Quote(raw), name, msg)
				continue
			}
			fmt.Printf("// UNMAPPED %s: %s\n", name, msg)
			continue
		}
		fmt.Printf("%s\n    %s\n", name, msg)
	}
}

func read(r io.Reader) (map[string]*testState, []string, []string, error) {
	tests := map[string]*testState{}
	var order []string
	var pkgOut []string
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
				pkgOut = append(pkgOut, e.Output)
			}
			continue
		}
		st := tests[e.Test]
		if st == nil {
			st = &testState{name: e.Test}
			tests[e.Test] = st
			order = append(order, e.Test)
			// Mark every ancestor (by "/" boundaries that are tests) as a parent.
			for i := len(e.Test) - 1; i > 0; i-- {
				if e.Test[i] == '/' {
					if p := tests[e.Test[:i]]; p != nil {
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
	return tests, order, pkgOut, sc.Err()
}

func lastLines(lines []string, n int) []string {
	if len(lines) > n {
		return lines[len(lines)-n:]
	}
	return lines
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
			if i+1 < len(out) && (strings.HasSuffix(errLine, ":")) {
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
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func loadNames(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw []string
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	m := make(map[string]string, len(raw))
	for _, r := range raw {
		m[rewrite(r)] = r
	}
	return m, nil
}

var dupSuffix = regexp.MustCompile(`#\d+$`)

// rawText finds the query text a test name is made of: first the longest
// suffix starting after a "/" whose rewritten form is a recorded text (the
// leaf's own query), then any "/"-delimited part of the name (a leaf below
// the query's subtest, e.g. "<query>/<query> join indexes").
func rawText(name string, names map[string]string) (string, bool) {
	name = dupSuffix.ReplaceAllString(name, "")
	var cuts []int
	for i := 0; i < len(name); i++ {
		if name[i] == '/' {
			cuts = append(cuts, i)
		}
	}
	for _, i := range cuts {
		if raw, ok := names[name[i+1:]]; ok {
			return raw, true
		}
	}
	for k := len(cuts) - 1; k >= 0; k-- {
		for j := k + 1; j < len(cuts); j++ {
			part := dupSuffix.ReplaceAllString(name[cuts[k]+1:cuts[j]], "")
			if raw, ok := names[part]; ok {
				return raw, true
			}
		}
	}
	return "", false
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
