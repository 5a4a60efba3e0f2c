package bench

import (
	"fmt"
	"io"
	"time"
)

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

// Report prints the run's results: tpmC, per-type counts and latencies,
// retries and errors, and the consistency checks.
func (r *Result) Report(out io.Writer) {
	p := func(format string, args ...any) { fmt.Fprintf(out, format, args...) }
	p("\n")
	if r.Measured > 0 {
		no := &r.Types[NewOrder]
		rbPct := 0.0
		if no.Completed() > 0 {
			rbPct = 100 * float64(no.Rollbacks) / float64(no.Completed())
		}
		p("tpmC %.1f  (New-Order transactions completed per minute over %.1f s measured after %.1f s warm-up;\n",
			r.TpmC, r.Measured.Seconds(), r.Warmup.Seconds())
		p("           %.1f%% of them rolled back by the client for an invalid item, as the specification asks)\n", rbPct)
		p("server %s, %d warehouses, %d threads; no keying or think times: not a TPC-C result\n\n", r.Server, r.Scale.Warehouses, r.Threads)
		p("%-13s %10s %8s %9s %9s %9s %9s %11s %11s %7s\n",
			"transaction", "committed", "rollback", "p50 ms", "p95 ms", "p99 ms", "max ms", "retry 1213", "retry 1205", "errors")
		for t := TxType(0); t < numTxTypes; t++ {
			s := &r.Types[t]
			mx := time.Duration(0)
			if n := len(s.Latencies); n > 0 {
				mx = s.Latencies[n-1]
			}
			p("%-13s %10d %8d %9s %9s %9s %9s %11d %11d %7d\n", t, s.Commits, s.Rollbacks,
				ms(s.Percentile(50)), ms(s.Percentile(95)), ms(s.Percentile(99)), ms(mx), s.Deadlocks, s.LockTimeouts, s.Errors)
		}
		tot := r.Total()
		p("%-13s %10d %8d %9s %9s %9s %9s %11d %11d %7d\n", "total", tot.Commits, tot.Rollbacks, "", "", "", "",
			tot.Deadlocks, tot.LockTimeouts, tot.Errors)
		p("(%.0f transactions per second committed; latency from the first BEGIN to the final COMMIT, retries included)\n",
			float64(tot.Commits)/r.Measured.Seconds())
	}
	if len(r.Errors) > 0 {
		p("\nerrors (whole run, warm-up included):\n")
		for _, e := range r.Errors {
			p("  %6d x %s\n", e.Count, e.Message)
		}
	}
	if r.Checks != nil {
		p("\nconsistency (TPC-C Clause 3.3.2):\n")
		for _, c := range r.Checks {
			verdict := "PASS"
			if !c.Pass {
				verdict = "FAIL"
			}
			p("  %s  %-8s %-62s %s\n", verdict, c.Clause, c.Name, c.Detail)
		}
		for _, n := range r.Notes {
			p("  note: %s\n", n)
		}
	}
	switch err := r.Err(); {
	case err != nil:
		p("\nresult: FAIL: %v\n", err)
	case r.Checks == nil:
		p("\nresult: PASS (no errors; consistency checks not run)\n")
	default:
		p("\nresult: PASS\n")
	}
}
