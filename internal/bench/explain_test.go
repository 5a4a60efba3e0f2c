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

// explainCase is one statement the benchmarks send, with literal values,
// and what its plan must show.
type explainCase struct {
	name, q string
	// index is the index every access of the named table must use ("" =
	// any index).
	table, index string
	// today pins a plan weakness as it is now (go-mysql-server's choices
	// with its default statistics), so that a change is seen: a substring
	// the plan contains today.
	today string
	// plan is a substring the plan must contain.
	plan string
	// noSort: the ORDER BY is answered by the index.
	noSort bool
}

// tpccStatements are the statements of txn.go with values in.
var tpccStatements = []explainCase{
	{name: "NO warehouse", q: "SELECT w_tax FROM warehouse WHERE w_id = 1", table: "warehouse", index: "w_id"},
	{name: "NO district", q: "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 2 FOR UPDATE", table: "district", index: "d_w_id,district.d_id"},
	{name: "NO district update", q: "UPDATE district SET d_next_o_id = 3001 WHERE d_w_id = 1 AND d_id = 2", table: "district"},
	{name: "NO customer", q: "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 3", table: "customer"},
	{name: "NO orders insert", q: "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (5001, 2, 1, 3, '2026-01-01 00:00:00', NULL, 5, 1)"},
	{name: "NO new_order insert", q: "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (5001, 2, 1)"},
	{name: "NO items", q: "SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id IN (1, 2, 3)", table: "item"},
	{name: "NO stock", q: "SELECT s_w_id, s_i_id, s_quantity, s_data, s_dist_02 FROM stock WHERE (s_w_id, s_i_id) IN ((1, 1), (1, 2), (1, 3)) FOR UPDATE", table: "stock"},
	{name: "NO stock update", q: "UPDATE stock SET s_quantity = 10, s_ytd = s_ytd + 1, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + 0 WHERE s_w_id = 1 AND s_i_id = 2", table: "stock"},
	{name: "NO order_line insert", q: "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES (5001, 2, 1, 1, 7, 1, NULL, 5, 12.5, 'x'), (5001, 2, 1, 2, 8, 1, NULL, 5, 12.5, 'y')"},
	{name: "P warehouse update", q: "UPDATE warehouse SET w_ytd = w_ytd + 10 WHERE w_id = 1", table: "warehouse"},
	{name: "P warehouse", q: "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = 1", table: "warehouse"},
	{name: "P district update", q: "UPDATE district SET d_ytd = d_ytd + 10 WHERE d_w_id = 1 AND d_id = 2", table: "district"},
	{name: "P district", q: "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = 1 AND d_id = 2", table: "district"},
	{name: "P customer by name", q: "SELECT c_id FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_last = 'BARBARBAR' ORDER BY c_first", table: "customer",
		index: "c_w_id,customer.c_d_id,customer.c_last,customer.c_first", noSort: true},
	{name: "P customer", q: "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 3 FOR UPDATE", table: "customer"},
	{name: "P customer data", q: "SELECT c_data FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 3", table: "customer"},
	{name: "P customer update", q: "UPDATE customer SET c_balance = 1, c_ytd_payment = 2, c_payment_cnt = 3 WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 3", table: "customer"},
	{name: "P history insert", q: "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (3, 2, 1, 2, 1, '2026-01-01 00:00:00', 10, 'x')"},
	{name: "OS customer by name", q: "SELECT c_id, c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_last = 'BARBARBAR' ORDER BY c_first", table: "customer",
		index: "c_w_id,customer.c_d_id,customer.c_last,customer.c_first", noSort: true},
	{name: "OS customer", q: "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 3", table: "customer"},
	{name: "OS last order", q: "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = 1 AND o_d_id = 2 AND o_c_id = 3 ORDER BY o_id DESC LIMIT 1", table: "orders",
		index: "o_w_id,orders.o_d_id,orders.o_c_id,orders.o_id", plan: "reverse: true", noSort: true},
	{name: "OS order lines", q: "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 2 AND ol_o_id = 3", table: "order_line"},
	{name: "D oldest new order", q: "SELECT no_o_id FROM new_order WHERE no_w_id = 1 AND no_d_id = 2 ORDER BY no_o_id LIMIT 1 FOR UPDATE", table: "new_order", noSort: true},
	{name: "D delete new orders", q: "DELETE FROM new_order WHERE (no_w_id, no_d_id, no_o_id) IN ((1, 2, 3), (1, 3, 4))", table: "new_order"},
	{name: "D orders", q: "SELECT o_d_id, o_c_id FROM orders WHERE (o_w_id, o_d_id, o_id) IN ((1, 2, 3), (1, 3, 4))", table: "orders"},
	{name: "D orders update", q: "UPDATE orders SET o_carrier_id = 5 WHERE (o_w_id, o_d_id, o_id) IN ((1, 2, 3), (1, 3, 4))", table: "orders"},
	{name: "D order lines update", q: "UPDATE order_line SET ol_delivery_d = '2026-01-01 00:00:00' WHERE (ol_w_id, ol_d_id, ol_o_id) IN ((1, 2, 3), (1, 3, 4))", table: "order_line"},
	{name: "D order lines sum", q: "SELECT ol_d_id, SUM(ol_amount) FROM order_line WHERE (ol_w_id, ol_d_id, ol_o_id) IN ((1, 2, 3), (1, 3, 4)) GROUP BY ol_d_id", table: "order_line"},
	{name: "D customer update", q: "UPDATE customer SET c_balance = c_balance + 10, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 3", table: "customer"},
	{name: "SL district", q: "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 2", table: "district"},
	{name: "SL stock count", q: "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = 1 AND ol_d_id = 2 AND ol_o_id >= 10 AND ol_o_id < 30 AND s_w_id = 1 AND s_i_id = ol_i_id AND s_quantity < 15", table: "order_line",
		plan: "LookupJoin"}, // one stock lookup per order line (lookupJoinRule), not the warehouse's stock rows
}

// sysbenchStatements are sysbench's oltp_* statements on sbtest1.
var sysbenchStatements = []explainCase{
	{name: "point_select", q: "SELECT c FROM sbtest1 WHERE id = 5", table: "sbtest1", index: "id"},
	{name: "simple_range", q: "SELECT c FROM sbtest1 WHERE id BETWEEN 5 AND 104", table: "sbtest1", index: "id"},
	{name: "sum_range", q: "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 5 AND 104", table: "sbtest1", index: "id"},
	{name: "order_range", q: "SELECT c FROM sbtest1 WHERE id BETWEEN 5 AND 104 ORDER BY c", table: "sbtest1", index: "id"},
	{name: "distinct_range", q: "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN 5 AND 104 ORDER BY c", table: "sbtest1", index: "id"},
	{name: "index_update", q: "UPDATE sbtest1 SET k = k + 1 WHERE id = 5", table: "sbtest1", index: "id"},
	{name: "non_index_update", q: "UPDATE sbtest1 SET c = 'x' WHERE id = 5", table: "sbtest1", index: "id"},
	{name: "delete", q: "DELETE FROM sbtest1 WHERE id = 5", table: "sbtest1", index: "id"},
	{name: "insert", q: "INSERT INTO sbtest1 (id, k, c, pad) VALUES (5, 1, 'x', 'y')"},
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
	run := func(dbName string, ddl []string, cases []explainCase) {
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
			plan, err := explain(ctx, db, c.q)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if !strings.HasPrefix(c.q, "INSERT") && fullScan.MatchString(plan) {
				t.Errorf("%s: a full table scan:\n%s", c.name, plan)
			}
			if c.table != "" && !strings.Contains(plan, "IndexedTableAccess("+c.table+")") {
				t.Errorf("%s: no index access to %s:\n%s", c.name, c.table, plan)
			}
			if c.index != "" && !strings.Contains(plan, "index: ["+c.table+"."+c.index) {
				t.Errorf("%s: not by index %s:\n%s", c.name, c.index, plan)
			}
			if c.noSort && strings.Contains(plan, "Sort(") {
				t.Errorf("%s: sorts:\n%s", c.name, plan)
			}
			if c.plan != "" && !strings.Contains(plan, c.plan) {
				t.Errorf("%s: the plan has no %q:\n%s", c.name, c.plan, plan)
			}
			if c.today != "" && !strings.Contains(plan, c.today) {
				t.Errorf("%s: the plan no longer has %q (pinned weakness changed: update the case):\n%s", c.name, c.today, plan)
			}
		}
	}
	// Plans depend on the tables' sizes: load a scaled-down database
	// (1,000 items, 300 customers per district) first.
	if _, err := Run(ctx, Config{DSN: s.DSN("tpcc"), Warehouses: 1, Threads: 2, Load: true, ScaleDown: 10, Seed: 1}); err != nil {
		t.Fatalf("loading: %v", err)
	}
	run("tpcc", nil, tpccStatements)
	checkStockLevel(ctx, t, s.DSN("tpcc"))
	run("sb", []string{"CREATE TABLE sbtest1 (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id), KEY k_1 (k))"}, sysbenchStatements)
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
