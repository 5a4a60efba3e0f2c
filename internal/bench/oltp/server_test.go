package oltp

import (
	"context"
	"strings"
	"testing"
	"time"

	"lockstep/internal/testutil"
)

// TestRunAgainstLockstep: against a real lockstep server, prepare makes a
// 1,000-row table with its index, and each workload runs 2 s at 4 threads
// with a plausible result: transactions at a positive rate, no errors,
// exactly the script's statements per transaction, one series point a
// second, ordered percentiles; oltp_insert's reported inserts are the
// rows the table grew by, and after write_only and read_write (a DELETE
// and an INSERT of the same id per transaction) the row count is what it
// was. cleanup drops the table.
func TestRunAgainstLockstep(t *testing.T) {
	s := testutil.StartServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := DefaultConfig()
	cfg.DSN = s.DSN("sbtest")
	cfg.Threads = 4
	cfg.Duration = 2 * time.Second
	cfg.ReportInterval = 0
	cfg.Options.TableSize = 1000
	cfg.Seed = 42
	if err := Prepare(ctx, cfg); err != nil {
		t.Fatalf("prepare: %v", err)
	}
	db := s.DB(t, "sbtest")
	var idx int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema = 'sbtest' AND table_name = 'sbtest1' AND index_name = 'k_1'").Scan(&idx); err != nil || idx != 1 {
		t.Fatalf("index k_1: %d columns, %v", idx, err)
	}
	perTxn := map[Workload]int64{PointSelect: 1, ReadOnly: 16, WriteOnly: 6, ReadWrite: 20, Insert: 1}
	for _, w := range []Workload{PointSelect, ReadOnly, WriteOnly, ReadWrite, Insert} {
		before, err := CountRows(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		c := cfg
		c.Workload = w
		res, err := Run(ctx, c)
		if err != nil {
			t.Fatalf("%s: %v", w, err)
		}
		after, err := CountRows(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %.0f tps, %.0f qps, p95 %.2f ms, %d retries, %d rows inserted, %d deleted, %d -> %d rows",
			w, res.TPS, res.QPS, res.Latency.P95, res.Retries, res.Inserted, res.Deleted, before[0], after[0])
		if res.TPS <= 0 || res.Transactions == 0 || res.Errors != 0 || res.Reconnects != 0 || len(res.ErrorMessages) != 0 {
			t.Errorf("%s: %d transactions (%.1f/s), %d errors, %d reconnects: %v", w, res.Transactions, res.TPS, res.Errors, res.Reconnects, res.ErrorMessages)
		}
		if res.Queries != res.Transactions*perTxn[w] || res.Reads+res.Writes+res.Other != res.Queries {
			t.Errorf("%s: %d queries (%d/%d/%d) for %d transactions, want %d each", w, res.Queries, res.Reads, res.Writes, res.Other, res.Transactions, perTxn[w])
		}
		if res.Duration < 1900*time.Millisecond || res.Duration > 2*time.Second {
			t.Errorf("%s: measured %s", w, res.Duration)
		}
		if n := len(res.Series); n < 1 || n > 3 {
			t.Errorf("%s: %d seconds in the series: %+v", w, n, res.Series)
		}
		l := res.Latency
		if !(l.Min > 0 && l.Min <= l.P50 && l.P50 <= l.P95 && l.P95 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.Max*1.001 && l.Avg >= l.Min && l.Avg <= l.Max) {
			t.Errorf("%s: latency %+v", w, l)
		}
		switch w {
		case Insert:
			if after[0]-before[0] != res.Inserted || res.Inserted < res.Transactions {
				t.Errorf("insert: table grew by %d rows, reported %d inserted (%d transactions in the window)", after[0]-before[0], res.Inserted, res.Transactions)
			}
		case WriteOnly, ReadWrite:
			if after[0] != before[0] || res.Inserted != res.Deleted || res.Inserted < res.Transactions {
				t.Errorf("%s: %d rows before, %d after; %d inserted, %d deleted", w, before[0], after[0], res.Inserted, res.Deleted)
			}
		default:
			if after[0] != before[0] || res.Inserted != 0 {
				t.Errorf("%s: %d rows before, %d after", w, before[0], after[0])
			}
		}
	}
	if err := Cleanup(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := CountRows(ctx, cfg); err == nil {
		t.Error("sbtest1 still there after cleanup")
	}
}

// TestRunReplacesLostConnections: when every connection of a run is cut
// (a proxy between client and server closes them) the events in flight
// fail, each is counted as an error and a reconnect with its message, each
// thread opens a new connection with its prepared statements once the
// link is back, and transactions go on to the end of the run.
func TestRunReplacesLostConnections(t *testing.T) {
	s := testutil.StartServer(t)
	p, err := testutil.NewProxy(s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := DefaultConfig()
	cfg.DSN = strings.Replace(s.DSN("sbtest"), s.Addr, p.Addr, 1)
	cfg.Workload = ReadWrite
	cfg.Threads = 2
	cfg.Duration = 4 * time.Second
	cfg.ReportInterval = 0
	cfg.Options.TableSize = 1000
	cfg.Seed = 7
	if err := Prepare(ctx, cfg); err != nil {
		t.Fatalf("prepare: %v", err)
	}
	go func() {
		time.Sleep(1500 * time.Millisecond)
		p.Cut()
		time.Sleep(300 * time.Millisecond)
		p.Heal()
	}()
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d transactions, %d errors, %d reconnects, %v, series %+v", res.Transactions, res.Errors, res.Reconnects, res.ErrorMessages, res.Series)
	if res.Reconnects != int64(cfg.Threads) || res.Errors != res.Reconnects || len(res.ErrorMessages) == 0 {
		t.Errorf("%d reconnects and %d errors (%v), want %d of each", res.Reconnects, res.Errors, res.ErrorMessages, cfg.Threads)
	}
	if n := len(res.Series); n < 3 || res.Series[n-1].TPS == 0 || res.Series[n-2].TPS == 0 {
		t.Errorf("no transactions after the reconnects: %+v", res.Series)
	}
	if res.Queries != res.Transactions*20 {
		t.Errorf("%d queries for %d transactions, want 20 each", res.Queries, res.Transactions)
	}
}
