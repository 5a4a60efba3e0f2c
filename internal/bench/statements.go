package bench

// Statement is one statement the benchmarks send, with literal values,
// and what lockstep's plan of it must show (TestBenchStatementsUseIndexes;
// test/differential compares their EXPLAIN with MariaDB's).
type Statement struct {
	Name, Query string
	// Index is the index every access of the named table must use ("" =
	// any index).
	Table, Index string
	// Today pins a plan weakness as it is now (go-mysql-server's choices
	// with its default statistics), so that a change is seen: a substring
	// the plan contains today.
	Today string
	// Plan is a substring the plan must contain.
	Plan string
	// NoSort: the ORDER BY is answered by the index.
	NoSort bool
}

// TPCCStatements are the statements of txn.go with values in (for the
// database Run loads with ScaleDown 10: 300 customers and orders per
// district).
var TPCCStatements = []Statement{
	{Name: "NO warehouse", Query: "SELECT w_tax FROM warehouse WHERE w_id = 1", Table: "warehouse", Index: "w_id"},
	{Name: "NO district", Query: "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 2 FOR UPDATE", Table: "district", Index: "d_w_id,district.d_id"},
	{Name: "NO district update", Query: "UPDATE district SET d_next_o_id = 3001 WHERE d_w_id = 1 AND d_id = 2", Table: "district"},
	{Name: "NO customer", Query: "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 3", Table: "customer"},
	{Name: "NO orders insert", Query: "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (5001, 2, 1, 3, '2026-01-01 00:00:00', NULL, 5, 1)"},
	{Name: "NO new_order insert", Query: "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (5001, 2, 1)"},
	{Name: "NO items", Query: "SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id IN (1, 2, 3)", Table: "item"},
	{Name: "NO stock", Query: "SELECT s_w_id, s_i_id, s_quantity, s_data, s_dist_02 FROM stock WHERE (s_w_id, s_i_id) IN ((1, 1), (1, 2), (1, 3)) FOR UPDATE", Table: "stock"},
	{Name: "NO stock update", Query: "UPDATE stock SET s_quantity = 10, s_ytd = s_ytd + 1, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + 0 WHERE s_w_id = 1 AND s_i_id = 2", Table: "stock"},
	{Name: "NO order_line insert", Query: "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES (5001, 2, 1, 1, 7, 1, NULL, 5, 12.5, 'x'), (5001, 2, 1, 2, 8, 1, NULL, 5, 12.5, 'y')"},
	{Name: "P warehouse update", Query: "UPDATE warehouse SET w_ytd = w_ytd + 10 WHERE w_id = 1", Table: "warehouse"},
	{Name: "P warehouse", Query: "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = 1", Table: "warehouse"},
	{Name: "P district update", Query: "UPDATE district SET d_ytd = d_ytd + 10 WHERE d_w_id = 1 AND d_id = 2", Table: "district"},
	{Name: "P district", Query: "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = 1 AND d_id = 2", Table: "district"},
	{Name: "P customer by name", Query: "SELECT c_id FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_last = 'BARBARBAR' ORDER BY c_first", Table: "customer",
		Index: "c_w_id,customer.c_d_id,customer.c_last,customer.c_first", NoSort: true},
	{Name: "P customer", Query: "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 3 FOR UPDATE", Table: "customer"},
	{Name: "P customer data", Query: "SELECT c_data FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 3", Table: "customer"},
	{Name: "P customer update", Query: "UPDATE customer SET c_balance = 1, c_ytd_payment = 2, c_payment_cnt = 3 WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 3", Table: "customer"},
	{Name: "P history insert", Query: "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (3, 2, 1, 2, 1, '2026-01-01 00:00:00', 10, 'x')"},
	{Name: "OS customer by name", Query: "SELECT c_id, c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_last = 'BARBARBAR' ORDER BY c_first", Table: "customer",
		Index: "c_w_id,customer.c_d_id,customer.c_last,customer.c_first", NoSort: true},
	{Name: "OS customer", Query: "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 3", Table: "customer"},
	{Name: "OS last order", Query: "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = 1 AND o_d_id = 2 AND o_c_id = 3 ORDER BY o_id DESC LIMIT 1", Table: "orders",
		Index: "o_w_id,orders.o_d_id,orders.o_c_id,orders.o_id", Plan: "reverse: true", NoSort: true},
	{Name: "OS order lines", Query: "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 2 AND ol_o_id = 3", Table: "order_line"},
	{Name: "D oldest new order", Query: "SELECT no_o_id FROM new_order WHERE no_w_id = 1 AND no_d_id = 2 ORDER BY no_o_id LIMIT 1 FOR UPDATE", Table: "new_order", NoSort: true},
	{Name: "D delete new orders", Query: "DELETE FROM new_order WHERE (no_w_id, no_d_id, no_o_id) IN ((1, 2, 3), (1, 3, 4))", Table: "new_order"},
	{Name: "D orders", Query: "SELECT o_d_id, o_c_id FROM orders WHERE (o_w_id, o_d_id, o_id) IN ((1, 2, 3), (1, 3, 4))", Table: "orders"},
	{Name: "D orders update", Query: "UPDATE orders SET o_carrier_id = 5 WHERE (o_w_id, o_d_id, o_id) IN ((1, 2, 3), (1, 3, 4))", Table: "orders"},
	{Name: "D order lines update", Query: "UPDATE order_line SET ol_delivery_d = '2026-01-01 00:00:00' WHERE (ol_w_id, ol_d_id, ol_o_id) IN ((1, 2, 3), (1, 3, 4))", Table: "order_line"},
	{Name: "D order lines sum", Query: "SELECT ol_d_id, SUM(ol_amount) FROM order_line WHERE (ol_w_id, ol_d_id, ol_o_id) IN ((1, 2, 3), (1, 3, 4)) GROUP BY ol_d_id", Table: "order_line"},
	{Name: "D customer update", Query: "UPDATE customer SET c_balance = c_balance + 10, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 3", Table: "customer"},
	{Name: "SL district", Query: "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 2", Table: "district"},
	{Name: "SL stock count", Query: "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = 1 AND ol_d_id = 2 AND ol_o_id >= 10 AND ol_o_id < 30 AND s_w_id = 1 AND s_i_id = ol_i_id AND s_quantity < 15", Table: "order_line",
		Plan: "LookupJoin"}, // one stock lookup per order line (lookupJoinRule), not the warehouse's stock rows
}

// SysbenchStatements are the statements of sysbench's Lua workloads
// (oltp_common.lua, select_random_points.lua, select_random_ranges.lua) on
// sbtest1.
var SysbenchStatements = []Statement{
	{Name: "point_select", Query: "SELECT c FROM sbtest1 WHERE id = 5", Table: "sbtest1", Index: "id"},
	{Name: "simple_range", Query: "SELECT c FROM sbtest1 WHERE id BETWEEN 5 AND 104", Table: "sbtest1", Index: "id"},
	{Name: "sum_range", Query: "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 5 AND 104", Table: "sbtest1", Index: "id"},
	{Name: "order_range", Query: "SELECT c FROM sbtest1 WHERE id BETWEEN 5 AND 104 ORDER BY c", Table: "sbtest1", Index: "id"},
	{Name: "distinct_range", Query: "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN 5 AND 104 ORDER BY c", Table: "sbtest1", Index: "id"},
	{Name: "index_update", Query: "UPDATE sbtest1 SET k = k + 1 WHERE id = 5", Table: "sbtest1", Index: "id"},
	{Name: "non_index_update", Query: "UPDATE sbtest1 SET c = 'x' WHERE id = 5", Table: "sbtest1", Index: "id"},
	{Name: "delete", Query: "DELETE FROM sbtest1 WHERE id = 5", Table: "sbtest1", Index: "id"},
	{Name: "insert", Query: "INSERT INTO sbtest1 (id, k, c, pad) VALUES (5, 1, 'x', 'y')"},
	{Name: "random_points", Query: "SELECT id, k, c, pad FROM sbtest1 WHERE k IN (5, 17, 230, 4000, 77, 9000, 12, 3, 800, 1500)", Table: "sbtest1"},
	{Name: "random_ranges", Query: "SELECT count(k) FROM sbtest1 WHERE k BETWEEN 5 AND 9 OR k BETWEEN 100 AND 104 OR k BETWEEN 3000 AND 3004", Table: "sbtest1"},
}
