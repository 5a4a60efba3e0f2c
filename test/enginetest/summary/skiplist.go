package main

import (
	"bytes"
	"fmt"
	"go/format"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// failure is a failing leaf test, classified.
type failure struct {
	name, msg string
	output    []string
	rule      *rule
}

// hookable failures are checked through the harness's
// ResultEvaluationHarness methods, where a test-name entry can skip them.
// (The prepared-statement variants check error kinds and error texts
// without that hook.)
var hookable = regexp.MustCompile(`Unexpected result for query|^Should be true \| Expected error of type|^Not equal: expected: "`)

func generateSkipList(w, report, doc io.Writer, runs []*run, nm *names) error {
	base := runs[0]

	// Failing leaves of all runs; a later run adds the failures that only
	// show once earlier ones are skipped (a skipped statement's side
	// effects are missing for the rest of its script).
	var fails []*failure
	seen := map[string]*failure{}
	parentOf := map[string]string{}
	for _, rn := range runs {
		for _, st := range rn.leaves() {
			if st.result != "fail" {
				continue
			}
			f := seen[st.name]
			if f == nil {
				f = &failure{name: st.name}
				seen[st.name] = f
				fails = append(fails, f)
				parentOf[st.name] = rn.parentName(st.name)
			}
			f.msg = firstError(st.output)
			f.output = st.output
		}
	}

	// How many passing tests each text also names: a text entry skips
	// them too.
	uses := map[string]int{}
	for _, st := range base.leaves() {
		if st.result == "pass" {
			if raw, ok := nm.text(st.name); ok {
				uses[raw]++
			}
		}
	}

	// Classify; a failure no rule matches takes the cause of a classified
	// failure of the same script (usually the earlier statement it
	// depends on).
	byParent := map[string][]*failure{}
	for _, f := range fails {
		f.rule = classify(f.name, f.msg)
		byParent[parentOf[f.name]] = append(byParent[parentOf[f.name]], f)
	}
	for _, f := range fails {
		// Only within a script: a suite's direct children are unrelated.
		if f.rule != nil || !strings.Contains(parentOf[f.name], "/") {
			continue
		}
		for _, o := range byParent[parentOf[f.name]] {
			if o.rule != nil {
				f.rule = o.rule
				break
			}
		}
	}

	texts := map[*rule]map[string]bool{}
	tests := map[*rule]map[string]bool{}
	add := func(m map[*rule]map[string]bool, r *rule, s string) {
		if m[r] == nil {
			m[r] = map[string]bool{}
		}
		m[r][s] = true
	}
	for i := range rules {
		for _, t := range rules[i].texts {
			add(texts, &rules[i], t)
		}
	}
	for _, f := range fails {
		r := f.rule
		if r == nil {
			r = &unclassified
			fmt.Fprintf(report, "UNCLASSIFIED %s: %s\n", f.name, short(f.msg))
		}
		prepared := strings.Contains(strings.SplitN(f.name, "/", 2)[0], "Prepared")
		hook := hookable.MatchString(f.msg) &&
			!(prepared && (strings.Contains(f.msg, "Expected error of type") || strings.HasPrefix(f.msg, `Not equal: expected: "`)))
		raw, ok := nm.setupStatement(f.output)
		if !ok {
			raw, ok = nm.text(f.name)
		}
		switch {
		case ok && excludeTexts[raw]:
		case hook && r.byName:
			add(tests, r, f.name)
		case ok && uses[raw] == 0:
			add(texts, r, raw)
		case hook:
			add(tests, r, f.name)
		case ok:
			add(texts, r, raw)
			fmt.Fprintf(report, "OVERSKIP text also names %d passing tests: %q\n", uses[raw], raw)
		default:
			add(tests, r, f.name)
			fmt.Fprintf(report, "UNSKIPPABLE? no text and no evaluation hook: %s: %s\n", f.name, short(f.msg))
		}
	}

	var b bytes.Buffer
	w, out := io.Writer(&b), w
	fmt.Fprint(w, skipListHeader)
	kind := ""
	var ordered []*rule
	for i := range rules {
		ordered = append(ordered, &rules[i])
	}
	for _, r := range append(ordered, &unclassified) {
		if len(texts[r]) == 0 && len(tests[r]) == 0 {
			continue
		}
		if r.kind != kind {
			kind = r.kind
			fmt.Fprintf(w, "\n\t// ---- %s ----\n\n", kindTitles[kind])
		}
		fmt.Fprintf(w, "\t{ // %s\n", r.key)
		fmt.Fprintf(w, "\t\treason: %s,\n", strconv.Quote("["+r.kind+"] "+r.reason))
		if r.crash {
			fmt.Fprintf(w, "\t\tcrash:  true,\n")
		}
		for _, part := range []struct {
			field string
			set   map[string]bool
		}{{"texts", texts[r]}, {"tests", tests[r]}} {
			if len(part.set) == 0 {
				continue
			}
			list := make([]string, 0, len(part.set))
			for s := range part.set {
				list = append(list, s)
			}
			sort.Strings(list)
			fmt.Fprintf(w, "\t\t%s: []string{\n", part.field)
			for _, s := range list {
				fmt.Fprintf(w, "\t\t\t%s,\n", strconv.Quote(s))
			}
			fmt.Fprintf(w, "\t\t},\n")
		}
		fmt.Fprintf(w, "\t},\n")
	}
	fmt.Fprint(w, "}\n")
	if doc != nil {
		writeSkipDoc(doc, ordered, texts, tests)
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		return err
	}
	_, err = out.Write(src)
	return err
}

// parentName returns the nearest ancestor of name that is a test.
func (rn *run) parentName(name string) string {
	for i := len(name) - 1; i > 0; i-- {
		if name[i] == '/' && rn.tests[name[:i]] != nil {
			return name[:i]
		}
	}
	return ""
}

var kindTitles = map[string]string{
	"bug":          "(a) lockstep bugs: wrong results or errors from lockstep storage / sqlfront",
	"feature":      "(b) features lockstep does not implement yet",
	"harness":      "(c) expectations tied to GMS's memory engine or reference harness, not lockstep bugs",
	"unclassified": "not classified yet: add a rule in test/enginetest/summary/rules.go",
}

const skipListHeader = `// Code generated by ` + "`go run ./test/enginetest/summary -skiplist`" + `; see docs/enginetest.md. DO NOT EDIT.
// To change a reason or a grouping, edit test/enginetest/summary/rules.go and
// regenerate.

package enginetest

// knownFailures lists, grouped by cause, every go-mysql-server enginetest
// query, statement, script or subtest that fails against lockstep, with the
// reason. Reasons start with the kind of cause:
//
//	[bug]      a lockstep bug: wrong result or error from storage / sqlfront
//	[feature]  a feature lockstep does not implement yet
//	[harness]  an expectation tied to GMS's memory engine or reference
//	           harness, not a lockstep bug
//
// texts are exact queries / setup statements / script names (skipped before
// they run; a skipped setup statement or script name skips its script);
// tests are Go test names as ` + "`go test`" + ` prints them (skipped when their
// result is checked).
var knownFailures = []skipGroup{
`

// writeSkipDoc writes the skip list's groups as a Markdown table.
func writeSkipDoc(w io.Writer, ordered []*rule, texts, tests map[*rule]map[string]bool) {
	fmt.Fprintln(w, "| Group | Kind | Entries | Reason |")
	fmt.Fprintln(w, "|---|---|---:|---|")
	for _, r := range append(ordered, &unclassified) {
		n := len(texts[r]) + len(tests[r])
		if n == 0 {
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %d | %s |\n", r.key, r.kind, n, strings.ReplaceAll(r.reason, "|", "\\|"))
	}
}
