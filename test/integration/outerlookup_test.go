package integration

import (
	"fmt"
	"strings"
	"testing"
)

// TestCorrelatedJoinLookup: a correlated subquery over a two-table join
// (sysbench-tpcc's consistency checks 10 and 12: a customer's delivered
// order lines, summed per customer) reads the customer's orders through
// the index the outer row's values fix and their lines through the lines'
// primary key — a lookup join — instead of merging two full scans per
// customer; the rows are those of the same sum computed by a GROUP BY.
// Shapes it must leave alone keep their plan and their rows.
func TestCorrelatedJoinLookup(t *testing.T) {
	srv := startServer(t)
	e := newDatabase(t, srv)
	s := e.session("s")
	s.exec("CREATE TABLE customer1 (c_id INT NOT NULL, c_d_id TINYINT NOT NULL, c_w_id SMALLINT NOT NULL, c_last VARCHAR(16), c_balance DECIMAL(12,2), c_ytd_payment DECIMAL(12,2), c_ref INT, PRIMARY KEY (c_w_id, c_d_id, c_id))")
	s.exec("CREATE TABLE orders1 (o_id INT NOT NULL, o_d_id TINYINT NOT NULL, o_w_id SMALLINT NOT NULL, o_c_id INT, o_tag VARCHAR(8), PRIMARY KEY (o_w_id, o_d_id, o_id), KEY idx_orders1 (o_w_id, o_d_id, o_c_id, o_id), KEY by_tag (o_tag))")
	s.exec("CREATE TABLE order_line1 (ol_o_id INT NOT NULL, ol_d_id TINYINT NOT NULL, ol_w_id SMALLINT NOT NULL, ol_number TINYINT NOT NULL, ol_delivery_d DATETIME, ol_amount DECIMAL(6,2), PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number))")
	var b strings.Builder
	b.WriteString("INSERT INTO customer1 VALUES ")
	for d := 1; d <= 2; d++ {
		for c := 1; c <= 40; c++ {
			if d > 1 || c > 1 {
				b.WriteByte(',')
			}
			ref := fmt.Sprint(c % 9)
			if c%11 == 0 {
				ref = "NULL"
			}
			fmt.Fprintf(&b, "(%d,%d,1,'%d',%d,%d,%s)", c, d, c%9, c%5, c%3, ref)
		}
	}
	s.exec(b.String())
	b.Reset()
	b.WriteString("INSERT INTO orders1 VALUES ")
	for d := 1; d <= 2; d++ {
		for o := 1; o <= 60; o++ {
			if d > 1 || o > 1 {
				b.WriteByte(',')
			}
			cust := fmt.Sprint(1 + (o*7)%45) // some customers have none, some orders no customer
			if o%13 == 0 {
				cust = "NULL"
			}
			fmt.Fprintf(&b, "(%d,%d,1,%s,'%d')", o, d, cust, o%9)
		}
	}
	s.exec(b.String())
	b.Reset()
	b.WriteString("INSERT INTO order_line1 VALUES ")
	for d := 1; d <= 2; d++ {
		for o := 1; o <= 60; o++ {
			for n := 1; n <= 1+o%5; n++ {
				if d > 1 || o > 1 || n > 1 {
					b.WriteByte(',')
				}
				deliv := "'2026-11-27 10:00:00'"
				if (o+n)%4 == 0 {
					deliv = "NULL"
				}
				fmt.Fprintf(&b, "(%d,%d,1,%d,%s,%d.%02d)", o, d, n, deliv, n, o%100)
			}
		}
	}
	s.exec(b.String())

	// sysbench-tpcc's check 12 (STRAIGHT_JOIN), check 10's shape, and the
	// same join written with JOIN ... ON and with a comma.
	const sumByGroup = `SELECT c.c_d_id, c.c_id, x.s FROM customer1 c LEFT JOIN
		(SELECT o_w_id, o_d_id, o_c_id, sum(ol_amount) s FROM orders1 JOIN order_line1 ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
		 WHERE ol_delivery_d IS NOT NULL GROUP BY o_w_id, o_d_id, o_c_id) x
		ON x.o_w_id = c.c_w_id AND x.o_d_id = c.c_d_id AND x.o_c_id = c.c_id WHERE c.c_w_id = 1 ORDER BY c.c_d_id, c.c_id`
	const byCustomer = "index: [orders1.o_w_id,orders1.o_d_id,orders1.o_c_id,orders1.o_id]\n"
	rewritten := []struct{ name, q, want, access string }{
		{"check 12", `SELECT count(*) FROM (SELECT c.c_id, c.c_d_id, c.c_balance c1, c_ytd_payment,
			(SELECT sum(ol_amount) FROM orders1 STRAIGHT_JOIN order_line1 WHERE ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
			   AND ol_delivery_d IS NOT NULL AND o_w_id = c.c_w_id AND o_d_id = c.c_d_id AND o_c_id = c.c_id) sm
			FROM customer1 c WHERE c.c_w_id = 1) t1 WHERE c1 + c_ytd_payment <> sm`,
			"SELECT count(*) FROM (" + strings.Replace(sumByGroup, "ORDER BY c.c_d_id, c.c_id", "", 1) + ") y JOIN customer1 c ON c.c_w_id = 1 AND c.c_d_id = y.c_d_id AND c.c_id = y.c_id WHERE c.c_balance + c.c_ytd_payment <> y.s", byCustomer},
		{"join on", `SELECT c.c_d_id, c.c_id, (SELECT sum(ol_amount) FROM orders1 JOIN order_line1 ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
			WHERE ol_delivery_d IS NOT NULL AND o_w_id = c.c_w_id AND o_d_id = c.c_d_id AND o_c_id = c.c_id) FROM customer1 c WHERE c.c_w_id = 1 ORDER BY c.c_d_id, c.c_id`,
			sumByGroup, byCustomer},
		{"comma, outer columns on the right", `SELECT c.c_d_id, c.c_id, (SELECT sum(ol_amount) FROM orders1, order_line1 WHERE ol_w_id = c.c_w_id AND ol_d_id = c.c_d_id AND ol_o_id = o_id
			AND ol_delivery_d IS NOT NULL AND o_w_id = c.c_w_id AND o_d_id = c.c_d_id AND o_c_id = c.c_id) FROM customer1 c WHERE c.c_w_id = 1 ORDER BY c.c_d_id, c.c_id`,
			sumByGroup, "keys: c.c_w_id, c.c_d_id\n"},
		{"count of lines per customer", `SELECT c.c_id, (SELECT count(*) FROM orders1 STRAIGHT_JOIN order_line1 WHERE ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
			AND o_w_id = c.c_w_id AND o_d_id = c.c_d_id AND o_c_id = c.c_id) n FROM customer1 c WHERE c.c_w_id = 1 AND c.c_d_id = 2 ORDER BY c.c_id`,
			`SELECT c.c_id, count(ol_o_id) FROM customer1 c LEFT JOIN orders1 ON o_w_id = c.c_w_id AND o_d_id = c.c_d_id AND o_c_id = c.c_id
			 LEFT JOIN order_line1 ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id WHERE c.c_w_id = 1 AND c.c_d_id = 2 GROUP BY c.c_id ORDER BY c.c_id`, byCustomer},
		// Sorted above the join: the join's own order is free.
		{"first line by order", `SELECT c.c_id, (SELECT ol_amount FROM orders1 STRAIGHT_JOIN order_line1 WHERE ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
			AND o_w_id = c.c_w_id AND o_d_id = c.c_d_id AND o_c_id = c.c_id ORDER BY o_id DESC, ol_number LIMIT 1) a FROM customer1 c WHERE c.c_w_id = 1 AND c.c_d_id = 1 ORDER BY c.c_id`,
			`SELECT c.c_id, (SELECT ol_amount FROM order_line1 WHERE ol_w_id = 1 AND ol_d_id = 1 AND ol_o_id = (SELECT max(o_id) FROM orders1 WHERE o_w_id = 1 AND o_d_id = 1 AND o_c_id = c.c_id) ORDER BY ol_number LIMIT 1)
			 FROM customer1 c WHERE c.c_w_id = 1 AND c.c_d_id = 1 ORDER BY c.c_id`, byCustomer},
		// A string compared with an integer column (MySQL compares them as
		// numbers): not a key; the columns before it are.
		{"string key", `SELECT c.c_id, (SELECT count(*) FROM orders1 STRAIGHT_JOIN order_line1 WHERE ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
			AND o_w_id = c.c_w_id AND o_d_id = c.c_d_id AND o_c_id = c.c_last) n FROM customer1 c WHERE c.c_w_id = 1 AND c.c_d_id = 1 ORDER BY c.c_id`,
			`SELECT c.c_id, count(ol_o_id) FROM customer1 c LEFT JOIN orders1 ON o_w_id = c.c_w_id AND o_d_id = c.c_d_id AND o_c_id = c.c_last
			 LEFT JOIN order_line1 ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id WHERE c.c_w_id = 1 AND c.c_d_id = 1 GROUP BY c.c_id ORDER BY c.c_id`, "keys: c.c_w_id, c.c_d_id\n"},
	}
	for _, c := range rewritten {
		plan := explainPlan(s, c.q)
		if !strings.Contains(plan, "─ LookupJoin") || !strings.Contains(plan, c.access) || strings.Contains(plan, "MergeJoin") || strings.Contains(plan, "HashJoin") ||
			strings.Contains(plan, "c.c_last\n") {
			t.Errorf("%s: not a lookup by the outer row:\n%s", c.name, plan)
		}
		got, want := s.rowsOf(c.q), s.rowsOf(c.want)
		if got != want || got == "" {
			t.Errorf("%s: rows differ\n got: %s\nwant: %s", c.name, got, want)
		}
	}

	// Left alone: an outer join (which go-mysql-server itself reads by the
	// outer row).
	kept := []struct{ name, q, want string }{
		{"left join", `SELECT c.c_id, (SELECT count(*) FROM orders1 LEFT JOIN order_line1 ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
			WHERE o_w_id = c.c_w_id AND o_d_id = c.c_d_id AND o_c_id = c.c_id) n FROM customer1 c WHERE c.c_w_id = 1 AND c.c_d_id = 1 ORDER BY c.c_id`,
			`SELECT c.c_id, count(x.o_id) FROM customer1 c LEFT JOIN (SELECT o_id, o_w_id, o_d_id, o_c_id FROM orders1 LEFT JOIN order_line1 ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id) x
			 ON x.o_w_id = c.c_w_id AND x.o_d_id = c.c_d_id AND x.o_c_id = c.c_id WHERE c.c_w_id = 1 AND c.c_d_id = 1 GROUP BY c.c_id ORDER BY c.c_id`},
	}
	for _, c := range kept {
		plan := explainPlan(s, c.q)
		if strings.Contains(plan, "─ LookupJoin") {
			t.Errorf("%s: rewritten, want left alone:\n%s", c.name, plan)
		}
		got, want := s.rowsOf(c.q), s.rowsOf(c.want)
		if got != want || got == "" {
			t.Errorf("%s: rows differ\n got: %s\nwant: %s", c.name, got, want)
		}
	}
}
