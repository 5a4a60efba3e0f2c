package oltp

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// Format is an output format of a Result.
type Format string

// The formats --output takes.
const (
	Table Format = "table"
	CSV   Format = "csv"
	JSON  Format = "json"
)

// ParseFormat checks an --output value.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case Table, CSV, JSON:
		return f, nil
	}
	return "", fmt.Errorf("--output must be table, csv or json, not %q", s)
}

// Write writes the result in the format.
func (r *Result) Write(out io.Writer, f Format) error {
	switch f {
	case CSV:
		return r.WriteCSV(out)
	case JSON:
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	default:
		return r.WriteTable(out)
	}
}

// WriteTable prints the result as sysbench's summary does, with the
// percentiles sysbench leaves out and the errors.
func (r *Result) WriteTable(out io.Writer) error {
	var err error
	p := func(format string, args ...any) {
		if err == nil {
			_, err = fmt.Fprintf(out, format, args...)
		}
	}
	p("\noltp %s: server %s, %d threads, %d tables of %d rows, %.1f s measured after %.1f s warm-up\n\n",
		r.Workload, r.Server, r.Threads, r.Tables, r.TableSize, r.Duration.Seconds(), r.Warmup.Seconds())
	p("SQL statistics:\n")
	p("    queries performed:\n")
	p("        read:                            %d\n", r.Reads)
	p("        write:                           %d\n", r.Writes)
	p("        other:                           %d\n", r.Other)
	p("        total:                           %d\n", r.Queries)
	p("    transactions:                        %-10d (%.2f per sec.)\n", r.Transactions, r.TPS)
	p("    queries:                             %-10d (%.2f per sec.)\n", r.Queries, r.QPS)
	p("    retried (1213, 1205, 1020):          %-10d (%.2f per sec.)\n", r.Retries, perSec(r.Retries, r.Duration.Seconds()))
	p("    errors:                              %-10d (%.2f per sec.)\n", r.Errors, perSec(r.Errors, r.Duration.Seconds()))
	p("    reconnects:                          %-10d (%.2f per sec.)\n", r.Reconnects, perSec(r.Reconnects, r.Duration.Seconds()))
	p("\nLatency (ms):\n")
	l := r.Latency
	for _, row := range []struct {
		name string
		v    float64
	}{{"min", l.Min}, {"avg", l.Avg}, {"p50", l.P50}, {"p95", l.P95}, {"p99", l.P99}, {"p99.9", l.P999}, {"max", l.Max}} {
		p("    %-36s %10.2f\n", row.name+":", row.v)
	}
	if len(r.ErrorMessages) > 0 {
		p("\nErrors (whole run, warm-up included):\n")
		for _, e := range r.ErrorMessages {
			p("  %6d x %s\n", e.Count, e.Message)
		}
	}
	return err
}

func perSec(n int64, s float64) float64 {
	if s <= 0 {
		return 0
	}
	return float64(n) / s
}

// CSVHeader is the header row WriteCSV writes.
var CSVHeader = []string{"workload", "threads", "tables", "table_size", "duration_s", "transactions", "tps", "qps",
	"min_ms", "avg_ms", "p50_ms", "p95_ms", "p99_ms", "p99_9_ms", "max_ms", "retries", "errors", "reconnects"}

// CSVRecord is the result as one row under CSVHeader.
func (r *Result) CSVRecord() []string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	l := r.Latency
	return []string{r.Workload, strconv.Itoa(r.Threads), strconv.Itoa(r.Tables), strconv.Itoa(r.TableSize),
		f(r.Duration.Seconds()), i(r.Transactions), f(r.TPS), f(r.QPS),
		f(l.Min), f(l.Avg), f(l.P50), f(l.P95), f(l.P99), f(l.P999), f(l.Max), i(r.Retries), i(r.Errors), i(r.Reconnects)}
}

// WriteCSV writes the header and the result's row.
func (r *Result) WriteCSV(out io.Writer) error {
	w := csv.NewWriter(out)
	w.Write(CSVHeader)     //nolint:errcheck // reported by Flush
	w.Write(r.CSVRecord()) //nolint:errcheck // reported by Flush
	w.Flush()
	return w.Error()
}
