package bench

import (
	"context"
	"database/sql"
	"regexp"
	"strings"
	"testing"
	"time"

	"lockstep/internal/testutil"
)

// otherTPCCStatements are shapes other TPC-C drivers send (Percona-Lab's
// sysbench-tpcc: an aggregate where the project's driver reads rows) on the
// project's schema.
var otherTPCCStatements = []Statement{
	{Name: "name count", Query: "SELECT count(c_id) namecnt FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_last = 'BARBARBAR'", Table: "customer",
		Index: "c_w_id,customer.c_d_id,customer.c_last,customer.c_first"},
	{Name: "name count group", Query: "SELECT count(*) FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_last = 'BARBARBAR' GROUP BY c_last", Table: "customer",
		Index: "c_w_id,customer.c_d_id,customer.c_last,customer.c_first"},
	{Name: "customer ids by name", Query: "SELECT DISTINCT c_id FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_last = 'BARBARBAR'", Table: "customer",
		Index: "c_w_id,customer.c_d_id,customer.c_last,customer.c_first"},
	{Name: "order lines sum", Query: "SELECT SUM(ol_amount) sm FROM order_line WHERE ol_o_id = 3 AND ol_d_id = 2 AND ol_w_id = 1", Table: "order_line",
		Index: "ol_w_id,order_line.ol_d_id,order_line.ol_o_id,order_line.ol_number"},
	{Name: "stock level items", Query: "SELECT DISTINCT ol_i_id FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 2 AND ol_o_id < 30 AND ol_o_id >= 10", Table: "order_line"},
	{Name: "stock count", Query: "SELECT count(*) FROM stock WHERE s_w_id = 1 AND s_i_id = 7 AND s_quantity < 15", Table: "stock"},
	{Name: "last order", Query: "SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = 1 AND o_d_id = 2 AND o_c_id = 3 ORDER BY o_id DESC", Table: "orders",
		Index: "o_w_id,orders.o_d_id,orders.o_c_id,orders.o_id", NoSort: true},
}

// fullScan matches a plan line that reads a whole table.
var fullScan = regexp.MustCompile(`(?m)(^|[─ ])Table$`)

// TestBenchStatementsUseIndexes: EXPLAIN PLAN of every statement TPC-C and
// sysbench send (lockstep bench tpcc's, sysbench's oltp_* scripts') shows
// index access to every table it reads, never a full scan, by the index
// that fixes the most columns, with ORDER BY answered by the index where
// one gives the order.
func TestBenchStatementsUseIndexes(t *testing.T) {
	s := testutil.StartServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := sql.Open("mysql", s.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for _, q := range []string{"CREATE DATABASE tpcc", "CREATE DATABASE sb"} {
		if _, err := admin.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	run := func(dbName string, ddl []string, cases []Statement) {
		db, err := sql.Open("mysql", s.DSN(dbName))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, q := range ddl {
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		for _, c := range cases {
			plan, err := explain(ctx, db, c.Query)
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			if !strings.HasPrefix(c.Query, "INSERT") && fullScan.MatchString(plan) {
				t.Errorf("%s: a full table scan:\n%s", c.Name, plan)
			}
			if c.Table != "" && !strings.Contains(plan, "IndexedTableAccess("+c.Table+")") {
				t.Errorf("%s: no index access to %s:\n%s", c.Name, c.Table, plan)
			}
			if c.Index != "" && !strings.Contains(plan, "index: ["+c.Table+"."+c.Index) {
				t.Errorf("%s: not by index %s:\n%s", c.Name, c.Index, plan)
			}
			if c.NoSort && strings.Contains(plan, "Sort(") {
				t.Errorf("%s: sorts:\n%s", c.Name, plan)
			}
			if c.Plan != "" && !strings.Contains(plan, c.Plan) {
				t.Errorf("%s: the plan has no %q:\n%s", c.Name, c.Plan, plan)
			}
			if c.Today != "" && !strings.Contains(plan, c.Today) {
				t.Errorf("%s: the plan no longer has %q (pinned weakness changed: update the case):\n%s", c.Name, c.Today, plan)
			}
		}
	}
	// Plans depend on the tables' sizes: load a scaled-down database
	// (1,000 items, 300 customers per district) first.
	if _, err := Run(ctx, Config{DSN: s.DSN("tpcc"), Warehouses: 1, Threads: 2, Load: true, ScaleDown: 10, Seed: 1}); err != nil {
		t.Fatalf("loading: %v", err)
	}
	run("tpcc", nil, TPCCStatements)
	run("tpcc", nil, otherTPCCStatements)
	checkStockLevel(ctx, t, s.DSN("tpcc"))
	run("sb", []string{"CREATE TABLE sbtest1 (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id), KEY k_1 (k))"}, SysbenchStatements)
}

func explain(ctx context.Context, db *sql.DB, q string) (string, error) {
	rows, err := db.QueryContext(ctx, "EXPLAIN PLAN "+q)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return "", err
		}
		b.WriteString(line + "\n")
	}
	return b.String(), rows.Err()
}

// checkStockLevel compares Stock-Level's join (run as a lookup join) with
// the same count computed from plain reads, for every district and a few
// thresholds.
func checkStockLevel(ctx context.Context, t *testing.T, dsn string) {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for d := 1; d <= 10; d++ {
		var next int
		if err := db.QueryRowContext(ctx, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = ?", d).Scan(&next); err != nil {
			t.Fatal(err)
		}
		items := map[int]bool{}
		rows, err := db.QueryContext(ctx, "SELECT ol_i_id FROM order_line WHERE ol_w_id = 1 AND ol_d_id = ? AND ol_o_id >= ? AND ol_o_id < ?", d, next-20, next)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var i int
			if err := rows.Scan(&i); err != nil {
				t.Fatal(err)
			}
			items[i] = true
		}
		rows.Close()
		for _, threshold := range []int{10, 15, 20, 101} {
			want := 0
			for i := range items {
				var q int
				if err := db.QueryRowContext(ctx, "SELECT s_quantity FROM stock WHERE s_w_id = 1 AND s_i_id = ?", i).Scan(&q); err != nil {
					t.Fatal(err)
				}
				if q < threshold {
					want++
				}
			}
			var got int
			if err := db.QueryRowContext(ctx, "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock "+
				"WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id >= ? AND ol_o_id < ? AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?",
				1, d, next-20, next, 1, threshold).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("Stock-Level district %d threshold %d: the join counts %d, plain reads %d", d, threshold, got, want)
			}
		}
	}
}
