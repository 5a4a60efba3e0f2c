// Command summary reads `go test -json` output of ./test/enginetest and
// prints per-suite counts of passed, failed and skipped tests; it also
// lists failures and regenerates the harness's skip list.
//
// Only leaf tests are counted (a script with three assertions counts as
// three tests); a suite is a top-level Test function.
//
//	go test -json ./test/enginetest/ | go run ./test/enginetest/summary
//	go run ./test/enginetest/summary -md run.json
//	go run ./test/enginetest/summary -failures -names names.json run.json
//	go run ./test/enginetest/summary -skiplist -names names.json noskip.json [more.json ...]
//
// Flags:
//
//	-md          print the counts as a Markdown table
//	-failures    list every failing leaf test with its first error line
//	-names FILE  the JSON array written by a run with
//	             LOCKSTEP_ENGINETEST_RECORD=FILE; with -failures, failing
//	             tests are shown as the exact texts the skip list needs
//	-skiplist    write test/enginetest/skiplist_test.go's content to stdout:
//	             every failing test of the runs given, classified by the
//	             rules in rules.go (the first run should be one with
//	             LOCKSTEP_ENGINETEST_NOSKIP=1; later runs add failures that
//	             only show once earlier ones are skipped); a report of
//	             unclassified or unskippable failures goes to stderr
//	-doc FILE    with -skiplist: also write the groups as a Markdown table
//
// Without file arguments the run is read from stdin.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
)

func main() {
	failures := flag.Bool("failures", false, "list failing leaf tests")
	namesFile := flag.String("names", "", "record file (LOCKSTEP_ENGINETEST_RECORD)")
	md := flag.Bool("md", false, "print counts as a Markdown table")
	skiplist := flag.Bool("skiplist", false, "generate the skip list from the runs given")
	docFile := flag.String("doc", "", "with -skiplist: also write the groups as a Markdown table to this file")
	staleFile := flag.String("stale", "", "skip-list file: list its entries that passed in the (no-skip) run given; exit 1 if any")
	flag.Parse()

	var runs []*run
	if flag.NArg() == 0 {
		rn, err := read(os.Stdin)
		check(err)
		runs = append(runs, rn)
	}
	for _, path := range flag.Args() {
		rn, err := readFile(path)
		check(err)
		runs = append(runs, rn)
	}
	var nm *names
	if *namesFile != "" {
		var err error
		nm, err = loadNames(*namesFile)
		check(err)
	}

	if *staleFile != "" {
		n, err := reportStale(os.Stdout, runs[0], nm, *staleFile)
		check(err)
		if n > 0 {
			os.Exit(1)
		}
		return
	}
	if *skiplist {
		if nm == nil {
			check(fmt.Errorf("-skiplist needs -names"))
		}
		var doc io.Writer
		if *docFile != "" {
			f, err := os.Create(*docFile)
			check(err)
			defer f.Close()
			doc = f
		}
		check(generateSkipList(os.Stdout, os.Stderr, doc, runs, nm))
		return
	}
	printCounts(runs[0], *md)
	if *failures {
		printFailures(runs[0], nm)
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "summary:", err)
		os.Exit(2)
	}
}

type counts struct{ pass, fail, skip, unfinished int }

func printCounts(rn *run, md bool) {
	suites := map[string]*counts{}
	var suiteOrder []string
	elapsed := map[string]float64{}
	for _, name := range rn.order {
		st := rn.tests[name]
		suite := name
		for i := 0; i < len(name); i++ {
			if name[i] == '/' {
				suite = name[:i]
				break
			}
		}
		c := suites[suite]
		if c == nil {
			c = &counts{}
			suites[suite] = c
			suiteOrder = append(suiteOrder, suite)
		}
		if name == suite {
			elapsed[suite] = st.elapsed
		}
		if st.parent {
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
	if md {
		fmt.Println("| Suite | Passed | Failed | Skipped |")
		fmt.Println("|---|---:|---:|---:|")
	} else {
		fmt.Printf("%-48s %7s %7s %7s %9s\n", "SUITE", "PASS", "FAIL", "SKIP", "TIME(s)")
	}
	for _, s := range suiteOrder {
		c := suites[s]
		total.pass += c.pass
		total.fail += c.fail
		total.skip += c.skip
		total.unfinished += c.unfinished
		if md {
			fmt.Printf("| %s | %d | %d | %d |\n", s, c.pass, c.fail, c.skip)
			continue
		}
		fmt.Printf("%-48s %7d %7d %7d %9.1f", s, c.pass, c.fail, c.skip, elapsed[s])
		if c.unfinished > 0 {
			fmt.Printf("  (%d did not finish)", c.unfinished)
		}
		fmt.Println()
	}
	if md {
		fmt.Printf("| **total** | **%d** | **%d** | **%d** |\n", total.pass, total.fail, total.skip)
	} else {
		fmt.Printf("%-48s %7d %7d %7d\n", "TOTAL", total.pass, total.fail, total.skip)
	}
	if total.unfinished > 0 {
		fmt.Printf("\n%d tests did not finish (panic or timeout); last package output:\n", total.unfinished)
		out := rn.pkgOut
		if len(out) > 15 {
			out = out[len(out)-15:]
		}
		for _, l := range out {
			fmt.Print("  ", l)
		}
	}
}

func printFailures(rn *run, nm *names) {
	fmt.Println()
	for _, st := range rn.leaves() {
		if st.result != "fail" && st.result != "" {
			continue
		}
		msg := short(firstError(st.output))
		if nm == nil {
			fmt.Printf("%s\n    %s\n", st.name, msg)
			continue
		}
		if raw, ok := nm.setupStatement(st.output); ok {
			fmt.Printf("%s, // setup statement of %s: %s\n", strconv.Quote(raw), st.name, msg)
		} else if raw, ok := nm.text(st.name); ok {
			fmt.Printf("%s, // %s: %s\n", strconv.Quote(raw), st.name, msg)
		} else {
			fmt.Printf("// (test name only) %s: %s\n", strconv.Quote(st.name), msg)
		}
	}
}
