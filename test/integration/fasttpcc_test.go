package integration

import (
	"fmt"
	"testing"
)

// TestFastPathSysbenchTPCC runs statements of Percona-Lab's sysbench-tpcc
// (tpcc_run.lua), as its text protocol sends them, on its schema: each must
// run on the fast path from its second execution on (the first teaches the
// plan its result metadata), and give what go-mysql-server gives with the
// fast path off.
func TestFastPathSysbenchTPCC(t *testing.T) {
	srv := startServer(t)
	e := newDatabase(t, srv)
	admin := e.session("admin")
	// clientFoundRows: an UPDATE reports the rows it matched, so two runs
	// a second apart compare alike.
	s := newSession(t, e.ctx, e.openDB("clientFoundRows=true"), "client")
	for _, q := range []string{
		"CREATE TABLE warehouse1 (w_id smallint not null, w_name varchar(10), w_street_1 varchar(20), w_street_2 varchar(20), w_city varchar(20), " +
			"w_state char(2), w_zip char(9), w_tax decimal(4,2), w_ytd decimal(12,2), primary key (w_id))",
		"CREATE TABLE customer1 (c_id int not null, c_d_id tinyint not null, c_w_id smallint not null, c_first varchar(16), c_middle char(2), " +
			"c_last varchar(16), c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20), c_state char(2), c_zip char(9), " +
			"c_phone char(16), c_since datetime, c_credit char(2), c_credit_lim bigint, c_discount decimal(4,2), c_balance decimal(12,2), " +
			"c_ytd_payment decimal(12,2), c_payment_cnt smallint, c_delivery_cnt smallint, c_data text, PRIMARY KEY(c_w_id, c_d_id, c_id))",
		"CREATE TABLE order_line1 (ol_o_id int not null, ol_d_id tinyint not null, ol_w_id smallint not null, ol_number tinyint not null, " +
			"ol_i_id int, ol_supply_w_id smallint, ol_delivery_d datetime, ol_quantity tinyint, ol_amount decimal(6,2), ol_dist_info char(24), " +
			"PRIMARY KEY(ol_w_id, ol_d_id, ol_o_id, ol_number))",
		"CREATE TABLE stock1 (s_i_id int not null, s_w_id smallint not null, s_quantity smallint, s_dist_01 char(24), s_dist_02 char(24), " +
			"s_dist_03 char(24), s_dist_04 char(24), s_dist_05 char(24), s_dist_06 char(24), s_dist_07 char(24), s_dist_08 char(24), " +
			"s_dist_09 char(24), s_dist_10 char(24), s_ytd decimal(8,0), s_order_cnt smallint, s_remote_cnt smallint, s_data varchar(50), " +
			"PRIMARY KEY(s_w_id, s_i_id))",
		"CREATE TABLE orders1 (o_id int not null, o_d_id tinyint not null, o_w_id smallint not null, o_c_id int, o_entry_d datetime, " +
			"o_carrier_id tinyint, o_ol_cnt tinyint, o_all_local tinyint, PRIMARY KEY(o_w_id, o_d_id, o_id))",
		"CREATE TABLE history1 (h_c_id int, h_c_d_id tinyint, h_c_w_id smallint, h_d_id tinyint, h_w_id smallint, h_date datetime, " +
			"h_amount decimal(6,2), h_data varchar(24))",
		"CREATE INDEX fkey_history_11 ON history1 (h_c_w_id,h_c_d_id,h_c_id)",
		"CREATE INDEX idx_customer1 ON customer1 (c_w_id,c_d_id,c_last,c_first)",
		"CREATE INDEX fkey_stock_21 ON stock1 (s_i_id)",
		"CREATE INDEX fkey_order_line_21 ON order_line1 (ol_supply_w_id,ol_i_id)",
		"INSERT INTO warehouse1 (w_id, w_tax) VALUES (1, 0.10), (2, NULL)",
		"INSERT INTO customer1 (c_id, c_d_id, c_w_id, c_last, c_credit, c_discount) VALUES (3, 2, 1, 'BARBAR', 'GC', 0.05), (4, 2, 1, NULL, NULL, NULL), (3, 2, 2, 'OUGHT', 'BC', 0.40)",
		"INSERT INTO stock1 (s_i_id, s_w_id, s_quantity) VALUES (7, 1, 10), (8, 1, 20), (9, 1, NULL), (10, 1, 14), (7, 2, 1)",
		"INSERT INTO order_line1 (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_amount) VALUES (2961, 2, 1, 1, 7, 10.50), (2961, 2, 1, 2, 8, 3.25), " +
			"(2961, 2, 1, 3, 9, NULL), (2990, 2, 1, 1, 7, 1.00), (2990, 2, 1, 2, 10, 2.00), (2981, 2, 1, 1, 9, 0.01), (3001, 2, 1, 1, 8, 5.00), (2962, 2, 1, 1, NULL, NULL)",
	} {
		admin.exec(q)
	}
	// checkNow reads back what NOW() stored (not a fast shape itself).
	const checkNow = "SELECT ol_number, TIMESTAMPDIFF(SECOND, ol_delivery_d, NOW()) BETWEEN 0 AND 300 FROM order_line1 WHERE ol_o_id = 2961 AND ol_d_id = 2 AND ol_w_id = 1"
	// checkInserted reads back the rows New-Order and Payment inserted
	// with NOW() (not a fast shape itself either).
	const checkInserted = "SELECT (SELECT COUNT(*) FROM orders1 WHERE TIMESTAMPDIFF(SECOND, o_entry_d, NOW()) BETWEEN 0 AND 300), " +
		"(SELECT COUNT(*) FROM history1 WHERE TIMESTAMPDIFF(SECOND, h_date, NOW()) BETWEEN 0 AND 300), (SELECT COUNT(*) FROM history1)"
	// newOrder's second and third executions are duplicates (1062), which
	// the fast path leaves to go-mysql-server for its message: only the
	// first runs on the fast path.
	const newOrder = "INSERT INTO orders1 (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) VALUES (3001,2,1,3,NOW(),5,1)"
	stmts := []string{
		// Stock-Level, case 2: per item.
		"SELECT count(*) FROM stock1 WHERE s_w_id = 1 AND s_i_id = 7 AND s_quantity < 15",
		"SELECT count(*) FROM stock1 WHERE s_w_id = 1 AND s_i_id = 8 AND s_quantity < 15",
		"SELECT count(*) FROM stock1 WHERE s_w_id = 1 AND s_i_id = 9 AND s_quantity < 15",
		"SELECT count(*) FROM stock1 WHERE s_w_id = 1 AND s_i_id = 99 AND s_quantity < 15",
		// Delivery: an order's amount.
		"SELECT SUM(ol_amount) sm FROM order_line1 WHERE ol_o_id = 2961 AND ol_d_id = 2 AND ol_w_id = 1",
		"SELECT SUM(ol_amount) sm FROM order_line1 WHERE ol_o_id = 2962 AND ol_d_id = 2 AND ol_w_id = 1",
		"SELECT SUM(ol_amount) sm FROM order_line1 WHERE ol_o_id = 9999 AND ol_d_id = 2 AND ol_w_id = 1",
		"UPDATE order_line1 SET ol_delivery_d = NOW() WHERE ol_o_id = 2961 AND ol_d_id = 2 AND ol_w_id = 1",
		"UPDATE order_line1 SET ol_delivery_d = '2024-01-02 03:04:05' WHERE ol_o_id = 2990 AND ol_d_id = 2 AND ol_w_id = 1",
		checkNow,
		// Stock-Level, case 1.
		"SELECT COUNT(DISTINCT (s_i_id)) FROM order_line1, stock1 WHERE ol_w_id = 1 AND ol_d_id = 2 AND ol_o_id < 3001 AND ol_o_id >= 2981 AND s_w_id= 1 AND s_i_id=ol_i_id AND s_quantity < 15",
		"SELECT COUNT(DISTINCT (s_i_id)) FROM order_line1, stock1 WHERE ol_w_id = 1 AND ol_d_id = 2 AND ol_o_id < 3002 AND ol_o_id >= 2900 AND s_w_id= 1 AND s_i_id=ol_i_id AND s_quantity < 25",
		// New-Order's order and Payment's history row, NOW() their time.
		newOrder,
		"INSERT INTO history1 (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES(2,1,3,2,1,NOW(),12.50,'w1 d2')",
		checkInserted,
		// New-Order: the customer's discount and the warehouse's tax.
		"SELECT c_discount, c_last, c_credit, w_tax FROM customer1, warehouse1 WHERE w_id = 1 AND c_w_id = w_id AND c_d_id = 2 AND c_id = 3",
		"SELECT c_discount, c_last, c_credit, w_tax FROM customer1, warehouse1 WHERE w_id = 1 AND c_w_id = w_id AND c_d_id = 2 AND c_id = 4",
		"SELECT c_discount, c_last, c_credit, w_tax FROM customer1, warehouse1 WHERE w_id = 2 AND c_w_id = w_id AND c_d_id = 2 AND c_id = 3",
		"SELECT c_discount, c_last, c_credit, w_tax FROM customer1, warehouse1 WHERE w_id = 1 AND c_w_id = w_id AND c_d_id = 2 AND c_id = 5",
		"SELECT c_discount, c_last, c_credit, w_tax FROM customer1, warehouse1 WHERE w_id = 3 AND c_w_id = w_id AND c_d_id = 2 AND c_id = 3",
	}
	run := func() (out []string, hits []int64) {
		for _, q := range stmts {
			h := fastCounter(t, admin, "hits")
			for i := 0; i < 3; i++ {
				var r string
				if len(q) > 6 && (q[:6] == "UPDATE" || q[:6] == "INSERT") {
					if res, err := s.c.ExecContext(s.ctx, q); err != nil {
						r = fmt.Sprintf("error %d", errno(err))
					} else {
						n, _ := res.RowsAffected()
						r = fmt.Sprintf("affected %d warnings %v", n, s.warnings())
					}
				} else {
					r = resultOf(s, q)
				}
				out = append(out, q+" => "+r)
			}
			hits = append(hits, fastCounter(t, admin, "hits")-h)
		}
		return out, hits
	}
	// NOW() is in the session's time zone.
	s.exec("SET time_zone = '+05:00'")
	on, hits := run()
	setFastPath(t, admin, false)
	s.exec("SET time_zone = '-07:00'")
	admin.exec("UPDATE order_line1 SET ol_delivery_d = NULL")
	admin.exec("DELETE FROM orders1")
	admin.exec("DELETE FROM history1")
	off, _ := run()
	admin.exec("SET GLOBAL lockstep_fast_path = ON")
	sameOutcomes(t, on, off)
	for i, q := range stmts {
		if q == newOrder {
			if hits[i] != 1 {
				t.Errorf("%s: %d of 3 executions on the fast path, want the first (the other two are duplicates)", q, hits[i])
			}
			continue
		}
		if hits[i] < 2 && q != checkNow && q != checkInserted {
			t.Errorf("%s: %d of 3 executions on the fast path, want 2 (the first learns the result metadata)", q, hits[i])
		}
	}
}
