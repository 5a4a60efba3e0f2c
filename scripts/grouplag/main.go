// Command grouplag samples how far replicas are behind their primary while
// a load runs and until they catch up: every -interval it asks the primary
// and each replica, at once, how many transactions they have executed (the
// GTID set's count) and, for lockstep, the raft log index each has applied.
// docs/benchmarks/notes.md, "Group replication (3 members on one machine)", uses
// it for the secondaries' apply lag at the primary's peak and MariaDB's
// replica lag after the same run.
//
// Lag in transactions: the primary's count minus the replica's, from the
// same sample round, over the samples taken during the load. Lag in
// seconds: for each primary sample (t, n) taken during the load, the time
// from t to the first replica sample whose count is at least n. After
// -load it goes on sampling until every replica has the primary's count
// (the load has ended: the count is final) and reports that catch-up time.
//
//	go run ./scripts/grouplag -kind lockstep -load 30s \
//	    -primary 'root@tcp(127.0.0.1:3481)/' \
//	    -replica 'root@tcp(127.0.0.1:3482)/' -replica 'root@tcp(127.0.0.1:3483)/'
//	go run ./scripts/grouplag -kind mariadb -load 30s \
//	    -primary 'root@unix(/tmp/x/mdbp.sock)/' -replica 'root@unix(/tmp/x/mdbr.sock)/'
//
// -csv FILE writes every sample (seconds since start, target, count,
// applied index).
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "github.com/go-sql-driver/mysql"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// sample is one target's answer in one round.
type sample struct {
	at      time.Duration // since start, halfway through the query
	count   int64         // transactions executed (GTIDs)
	applied int64         // lockstep: Lockstep_group_replication_applied_index
}

type target struct {
	name    string
	db      *sql.DB
	primary bool
	samples []sample
}

func main() {
	var replicas listFlag
	primary := flag.String("primary", "", "DSN of the primary")
	flag.Var(&replicas, "replica", "DSN of a replica (repeat the flag)")
	kind := flag.String("kind", "lockstep", "lockstep or mariadb")
	interval := flag.Duration("interval", 100*time.Millisecond, "time between sample rounds")
	load := flag.Duration("load", 30*time.Second, "how long the load runs (lag is computed over this span)")
	catchUpMax := flag.Duration("catchup-max", 5*time.Minute, "how long to wait for the replicas after the load")
	csvPath := flag.String("csv", "", "write every sample to this file")
	flag.Parse()
	if *primary == "" || len(replicas) == 0 || (*kind != "lockstep" && *kind != "mariadb") {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*kind, *primary, replicas, *interval, *load, *catchUpMax, *csvPath); err != nil {
		fmt.Fprintln(os.Stderr, "grouplag:", err)
		os.Exit(1)
	}
}

func run(kind, primary string, replicas []string, interval, load, catchUpMax time.Duration, csvPath string) error {
	var targets []*target
	for i, dsn := range append([]string{primary}, replicas...) {
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			return fmt.Errorf("opening %s: %w", dsn, err)
		}
		db.SetMaxOpenConns(1)
		defer db.Close()
		name := "primary"
		if i > 0 {
			name = "replica" + strconv.Itoa(i)
		}
		targets = append(targets, &target{name: name, db: db, primary: i == 0})
	}
	start := time.Now()
	ctx := context.Background()
	for round := 0; ; round++ {
		next := start.Add(time.Duration(round+1) * interval)
		if err := sampleRound(ctx, kind, targets, start); err != nil {
			return err
		}
		elapsed := time.Since(start)
		if elapsed >= load && caughtUp(targets) {
			break
		}
		if elapsed > load+catchUpMax {
			return fmt.Errorf("replicas not caught up %v after the load", catchUpMax)
		}
		time.Sleep(time.Until(next))
	}
	if csvPath != "" {
		if err := writeCSV(csvPath, targets); err != nil {
			return err
		}
	}
	report(kind, targets, load)
	return nil
}

// sampleRound asks every target at once.
func sampleRound(ctx context.Context, kind string, targets []*target, start time.Time) error {
	var wg sync.WaitGroup
	errs := make([]error, len(targets))
	for i, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			before := time.Since(start)
			s, err := query(ctx, kind, t)
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w", t.name, err)
				return
			}
			s.at = (before + time.Since(start)) / 2
			t.samples = append(t.samples, s)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func query(ctx context.Context, kind string, t *target) (sample, error) {
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var s sample
	switch kind {
	case "lockstep":
		var set string
		if err := t.db.QueryRowContext(qctx, "SELECT @@gtid_executed").Scan(&set); err != nil {
			return s, fmt.Errorf("@@gtid_executed: %w", err)
		}
		n, err := countMySQLSet(set)
		if err != nil {
			return s, err
		}
		s.count = n
		var name string
		if err := t.db.QueryRowContext(qctx, "SHOW GLOBAL STATUS LIKE 'Lockstep_group_replication_applied_index'").Scan(&name, &s.applied); err != nil {
			return s, fmt.Errorf("applied index: %w", err)
		}
	case "mariadb":
		q := "SELECT @@gtid_slave_pos"
		if t.primary {
			q = "SELECT @@gtid_binlog_pos"
		}
		var pos string
		if err := t.db.QueryRowContext(qctx, q).Scan(&pos); err != nil {
			return s, fmt.Errorf("%s: %w", q, err)
		}
		n, err := countMariaDBPos(pos)
		if err != nil {
			return s, err
		}
		s.count = n
	}
	return s, nil
}

// countMySQLSet counts the transactions of a MySQL GTID set
// ("uuid:1-5:7,uuid2:1-3").
func countMySQLSet(set string) (int64, error) {
	var n int64
	for part := range strings.SplitSeq(strings.ReplaceAll(set, "\n", ""), ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		ivs := strings.Split(part, ":")
		for _, iv := range ivs[1:] {
			lo, hi, found := strings.Cut(iv, "-")
			a, err := strconv.ParseInt(lo, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("GTID set %q: %w", set, err)
			}
			b := a
			if found {
				if b, err = strconv.ParseInt(hi, 10, 64); err != nil {
					return 0, fmt.Errorf("GTID set %q: %w", set, err)
				}
			}
			n += b - a + 1
		}
	}
	return n, nil
}

// countMariaDBPos sums the sequence numbers of a MariaDB GTID position
// ("0-1-123,1-1-5": domain-server-seq, one per domain).
func countMariaDBPos(pos string) (int64, error) {
	var n int64
	for part := range strings.SplitSeq(pos, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		f := strings.Split(part, "-")
		seq, err := strconv.ParseInt(f[len(f)-1], 10, 64)
		if err != nil || len(f) != 3 {
			return 0, fmt.Errorf("GTID position %q: not domain-server-seq", pos)
		}
		n += seq
	}
	return n, nil
}

func caughtUp(targets []*target) bool {
	p := targets[0].samples[len(targets[0].samples)-1].count
	for _, t := range targets[1:] {
		if t.samples[len(t.samples)-1].count < p {
			return false
		}
	}
	return true
}

func writeCSV(path string, targets []*target) error {
	var b strings.Builder
	b.WriteString("seconds,target,count,applied_index\n")
	for _, t := range targets {
		for _, s := range t.samples {
			fmt.Fprintf(&b, "%.3f,%s,%d,%d\n", s.at.Seconds(), t.name, s.count, s.applied)
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func report(kind string, targets []*target, load time.Duration) {
	p := targets[0]
	inLoad := 0
	for inLoad < len(p.samples) && p.samples[inLoad].at <= load {
		inLoad++
	}
	first, last := p.samples[0], p.samples[inLoad-1]
	fmt.Printf("primary: %d transactions in %.1f s of load (%.0f/s), %d sample rounds\n",
		last.count-first.count, (last.at - first.at).Seconds(),
		float64(last.count-first.count)/(last.at-first.at).Seconds(), inLoad)
	end := p.samples[len(p.samples)-1].at
	fmt.Printf("caught up %.2f s after the load's end (every replica at the primary's count)\n", (end - load).Seconds())
	for _, r := range targets[1:] {
		txns, secs, entries := lags(kind, p, r, inLoad)
		fmt.Printf("%s: lag in transactions p50 %.0f p99 %.0f max %.0f; in seconds p50 %.2f p99 %.2f max %.2f",
			r.name, pct(txns, 50), pct(txns, 99), pct(txns, 100), pct(secs, 50), pct(secs, 99), pct(secs, 100))
		if kind == "lockstep" {
			fmt.Printf("; in log entries p50 %.0f p99 %.0f max %.0f", pct(entries, 50), pct(entries, 99), pct(entries, 100))
		}
		fmt.Println()
	}
}

// lags compares replica r with primary p over the first inLoad sample
// rounds: the lag in transactions and (lockstep) log entries in each
// round, and for each primary sample the seconds until the first replica
// sample at or past its count (none if the replica never got there).
func lags(kind string, p, r *target, inLoad int) (txns, secs, entries []float64) {
	for i := 0; i < inLoad && i < len(r.samples); i++ {
		txns = append(txns, float64(p.samples[i].count-r.samples[i].count))
		if kind == "lockstep" {
			entries = append(entries, float64(p.samples[i].applied-r.samples[i].applied))
		}
		j, _ := slices.BinarySearchFunc(r.samples, p.samples[i].count, func(s sample, n int64) int {
			switch {
			case s.count < n:
				return -1
			case s.count > n:
				return 1
			}
			return 0
		})
		if j < len(r.samples) {
			secs = append(secs, max(0, (r.samples[j].at-p.samples[i].at).Seconds()))
		}
	}
	return txns, secs, entries
}

// pct is the nearest-rank p-th percentile (p 100: the largest).
func pct(v []float64, p int) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	rank := (p*len(s) + 99) / 100
	return s[max(rank, 1)-1]
}
