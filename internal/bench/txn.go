package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// worker is one terminal: one connection with its own server-side prepared
// statements, a home warehouse, and the district Stock-Level reports on
// (Clause 2.8.1: fixed per terminal).
type worker struct {
	run   *runner
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
	r     rng
	w     int
	slD   int
	stats [numTxTypes]TypeStats
}

// stmtError tags an error with the statement that returned it.
type stmtError struct {
	stmt string
	err  error
}

func (e *stmtError) Error() string {
	return fmt.Sprintf("%v (statement: %s)", e.err, compactSQL(e.stmt))
}
func (e *stmtError) Unwrap() error { return e.err }

// compactSQL shortens a statement for messages: whitespace folded, long IN
// lists cut.
func compactSQL(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if len(q) > 300 {
		q = q[:300] + "..."
	}
	return q
}

// errInconsistent is a result the transaction's own reads rule out (a row
// that must exist is missing, a DELETE removed fewer rows than it locked).
var errInconsistent = errors.New("inconsistent result")

func (w *worker) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if s, ok := w.stmts[q]; ok {
		return s, nil
	}
	s, err := w.conn.PrepareContext(ctx, q)
	if err != nil {
		return nil, &stmtError{"PREPARE " + q, err}
	}
	w.stmts[q] = s
	return s, nil
}

// exec runs a prepared statement (COM_STMT_EXECUTE).
func (w *worker) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	s, err := w.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	res, err := s.ExecContext(ctx, args...)
	if err != nil {
		return nil, &stmtError{q, err}
	}
	return res, nil
}

// query runs a prepared query and calls scan for every row.
func (w *worker) query(ctx context.Context, q string, args []any, scan func(*sql.Rows) error) error {
	s, err := w.stmt(ctx, q)
	if err != nil {
		return err
	}
	rows, err := s.QueryContext(ctx, args...)
	if err != nil {
		return &stmtError{q, err}
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return &stmtError{q, err}
		}
	}
	if err := rows.Err(); err != nil {
		return &stmtError{q, err}
	}
	if err := rows.Close(); err != nil {
		return &stmtError{q, err}
	}
	return nil
}

// queryRow runs a prepared query that must return exactly one row.
func (w *worker) queryRow(ctx context.Context, q string, args []any, dest ...any) error {
	n := 0
	err := w.query(ctx, q, args, func(rows *sql.Rows) error {
		n++
		if n > 1 {
			return nil
		}
		return rows.Scan(dest...)
	})
	if err != nil {
		return err
	}
	if n != 1 {
		return &stmtError{q, fmt.Errorf("%w: %d rows where one was expected (args %v)", errInconsistent, n, args)}
	}
	return nil
}

// text runs a statement over the text protocol (BEGIN, COMMIT, ROLLBACK), as
// drivers do for transaction control.
func (w *worker) text(ctx context.Context, q string) error {
	if _, err := w.conn.ExecContext(ctx, q); err != nil {
		return &stmtError{q, err}
	}
	return nil
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func rowPlaceholders(rows, cols int) string {
	one := "(" + placeholders(cols) + ")"
	return strings.TrimSuffix(strings.Repeat(one+", ", rows), ", ")
}

func cents(s string) (int64, error) {
	v, ok := parseFixed(s, 2)
	if !ok {
		return 0, fmt.Errorf("bad DECIMAL value %q", s)
	}
	return v, nil
}

// --- inputs (Clauses 2.4.1, 2.5.1, 2.6.1, 2.7.1, 2.8.1) ---------------------

type olInput struct{ item, supplyW, qty int }

type newOrderInput struct {
	d, c  int
	lines []olInput
}

type customerSel struct {
	byName bool
	c      int
	last   string
}

type paymentInput struct {
	d, cw, cd int
	cust      customerSel
	amount    int64 // cents
}

type orderStatusInput struct {
	d    int
	cust customerSel
}

type txInput struct {
	no        newOrderInput
	pay       paymentInput
	os        orderStatusInput
	carrier   int // Delivery
	threshold int // Stock-Level
}

func (w *worker) pickType() TxType {
	x := w.r.IntN(100)
	for t := TxType(0); t < numTxTypes; t++ {
		if x < mix[t] {
			return t
		}
		x -= mix[t]
	}
	return NewOrder
}

func (w *worker) otherWarehouse() int {
	n := w.run.scale.Warehouses
	if n == 1 {
		return w.w
	}
	o := w.r.uniform(1, n-1)
	if o >= w.w {
		o++
	}
	return o
}

func (w *worker) customer() customerSel {
	sc, k := w.run.scale, w.run.consts
	if w.r.IntN(100) < 60 {
		return customerSel{byName: true, last: lastName(w.r.nuRand(255, k.cLast, 0, sc.lastNameMax()))}
	}
	return customerSel{c: w.r.nuRand(1023, k.cID, 1, sc.Customers)}
}

func (w *worker) input(t TxType) *txInput {
	sc, k := w.run.scale, w.run.consts
	in := &txInput{}
	switch t {
	case NewOrder:
		in.no.d = w.r.uniform(1, sc.Districts)
		in.no.c = w.r.nuRand(1023, k.cID, 1, sc.Customers)
		n := w.r.uniform(5, 15)
		rollback := w.r.uniform(1, 100) == 1
		in.no.lines = make([]olInput, n)
		for i := range in.no.lines {
			l := &in.no.lines[i]
			l.item = w.r.nuRand(8191, k.olIID, 1, sc.Items)
			if rollback && i == n-1 {
				l.item = sc.Items + 1 // an unused item id (Clause 2.4.1.5)
			}
			l.supplyW = w.w
			if sc.Warehouses > 1 && w.r.IntN(100) == 0 {
				l.supplyW = w.otherWarehouse()
			}
			l.qty = w.r.uniform(1, 10)
		}
	case Payment:
		p := &in.pay
		p.d = w.r.uniform(1, sc.Districts)
		if w.r.IntN(100) < 85 {
			p.cw, p.cd = w.w, p.d
		} else {
			p.cw, p.cd = w.otherWarehouse(), w.r.uniform(1, sc.Districts)
		}
		p.cust = w.customer()
		p.amount = int64(w.r.uniform(100, 500000))
	case OrderStatus:
		in.os.d = w.r.uniform(1, sc.Districts)
		in.os.cust = w.customer()
	case Delivery:
		in.carrier = w.r.uniform(1, 10)
	case StockLevel:
		in.threshold = w.r.uniform(10, 20)
	}
	return in
}

// do runs one attempt of a transaction. userRollback reports New-Order's
// rollback on an invalid item.
func (w *worker) do(ctx context.Context, t TxType, in *txInput) (userRollback bool, err error) {
	if err := w.text(ctx, "BEGIN"); err != nil {
		return false, err
	}
	switch t {
	case NewOrder:
		userRollback, err = w.newOrder(ctx, &in.no)
	case Payment:
		err = w.payment(ctx, &in.pay)
	case OrderStatus:
		err = w.orderStatus(ctx, &in.os)
	case Delivery:
		err = w.delivery(ctx, in.carrier)
	case StockLevel:
		err = w.stockLevel(ctx, in.threshold)
	}
	if err != nil {
		return false, err
	}
	if userRollback {
		return true, w.text(ctx, "ROLLBACK")
	}
	return false, w.text(ctx, "COMMIT")
}

// --- New-Order (Clause 2.4.2) -------------------------------------------------

type stockKey struct{ w, i int }

type stockRow struct {
	qty          int
	data, dist   string
	ytd, cnt, rc int // accumulated changes
}

func (w *worker) newOrder(ctx context.Context, in *newOrderInput) (bool, error) {
	var wTax, dTax, cDiscount, cLast, cCredit string
	var oID int
	if err := w.queryRow(ctx, "SELECT w_tax FROM warehouse WHERE w_id = ?", []any{w.w}, &wTax); err != nil {
		return false, err
	}
	if err := w.queryRow(ctx, "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ? FOR UPDATE",
		[]any{w.w, in.d}, &dTax, &oID); err != nil {
		return false, err
	}
	if _, err := w.exec(ctx, "UPDATE district SET d_next_o_id = ? WHERE d_w_id = ? AND d_id = ?", oID+1, w.w, in.d); err != nil {
		return false, err
	}
	if err := w.queryRow(ctx, "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
		[]any{w.w, in.d, in.c}, &cDiscount, &cLast, &cCredit); err != nil {
		return false, err
	}
	allLocal := 1
	for _, l := range in.lines {
		if l.supplyW != w.w {
			allLocal = 0
		}
	}
	now := time.Now().UTC().Truncate(time.Second)
	if _, err := w.exec(ctx, "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, ?, NULL, ?, ?)",
		oID, in.d, w.w, in.c, now, len(in.lines), allLocal); err != nil {
		return false, err
	}
	if _, err := w.exec(ctx, "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)", oID, in.d, w.w); err != nil {
		return false, err
	}

	// Items: one IN list of the distinct ids. A missing one is the invalid
	// item of Clause 2.4.2.3: the transaction is rolled back.
	var ids []int
	for _, l := range in.lines {
		ids = append(ids, l.item)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	type itemRow struct {
		price       int64
		name, idata string
	}
	items := make(map[int]itemRow, len(ids))
	err := w.query(ctx, "SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id IN ("+placeholders(len(ids))+")", args,
		func(rows *sql.Rows) error {
			var id int
			var price string
			var it itemRow
			if err := rows.Scan(&id, &price, &it.name, &it.idata); err != nil {
				return err
			}
			p, err := cents(price)
			if err != nil {
				return err
			}
			it.price = p
			items[id] = it
			return nil
		})
	if err != nil {
		return false, err
	}
	if len(items) < len(ids) {
		return true, nil
	}

	// Stock: the distinct (warehouse, item) pairs, locked in one row
	// constructor IN list.
	var keys []stockKey
	for _, l := range in.lines {
		keys = append(keys, stockKey{l.supplyW, l.item})
	}
	slices.SortFunc(keys, func(a, b stockKey) int {
		if a.w != b.w {
			return a.w - b.w
		}
		return a.i - b.i
	})
	keys = slices.Compact(keys)
	args = args[:0]
	for _, k := range keys {
		args = append(args, k.w, k.i)
	}
	stock := make(map[stockKey]*stockRow, len(keys))
	q := fmt.Sprintf("SELECT s_w_id, s_i_id, s_quantity, s_data, s_dist_%02d FROM stock WHERE (s_w_id, s_i_id) IN (%s) FOR UPDATE",
		in.d, rowPlaceholders(len(keys), 2))
	err = w.query(ctx, q, args, func(rows *sql.Rows) error {
		var k stockKey
		st := &stockRow{}
		if err := rows.Scan(&k.w, &k.i, &st.qty, &st.data, &st.dist); err != nil {
			return err
		}
		stock[k] = st
		return nil
	})
	if err != nil {
		return false, err
	}
	if len(stock) != len(keys) {
		return false, &stmtError{q, fmt.Errorf("%w: %d stock rows for %d keys", errInconsistent, len(stock), len(keys))}
	}

	lineArgs := make([]any, 0, len(in.lines)*9)
	for n, l := range in.lines {
		st := stock[stockKey{l.supplyW, l.item}]
		if st.qty >= l.qty+10 {
			st.qty -= l.qty
		} else {
			st.qty = st.qty - l.qty + 91
		}
		st.ytd += l.qty
		st.cnt++
		if l.supplyW != w.w {
			st.rc++
		}
		amount := int64(l.qty) * items[l.item].price
		lineArgs = append(lineArgs, oID, in.d, w.w, n+1, l.item, l.supplyW, l.qty, money(amount), st.dist)
	}
	for _, k := range keys {
		st := stock[k]
		if _, err := w.exec(ctx, "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + ?, s_remote_cnt = s_remote_cnt + ? WHERE s_w_id = ? AND s_i_id = ?",
			st.qty, st.ytd, st.cnt, st.rc, k.w, k.i); err != nil {
			return false, err
		}
	}
	one := "(?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)"
	q = "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES " +
		strings.TrimSuffix(strings.Repeat(one+", ", len(in.lines)), ", ")
	if _, err := w.exec(ctx, q, lineArgs...); err != nil {
		return false, err
	}
	return false, nil
}

// --- Payment (Clause 2.5.2) ---------------------------------------------------

// customerByName returns the id of the customer in position n/2 rounded up
// among those with the last name, sorted by C_FIRST (Clause 2.5.2.2).
func (w *worker) customerByName(ctx context.Context, cw, cd int, last string) (int, error) {
	var ids []int
	q := "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first"
	err := w.query(ctx, q, []any{cw, cd, last}, func(rows *sql.Rows) error {
		var id int
		if err := rows.Scan(&id); err != nil {
			return err
		}
		ids = append(ids, id)
		return nil
	})
	if err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, &stmtError{q, fmt.Errorf("%w: no customer named %s in district %d/%d", errInconsistent, last, cw, cd)}
	}
	return ids[(len(ids)-1)/2], nil
}

func (w *worker) payment(ctx context.Context, p *paymentInput) error {
	amount := money(p.amount)
	if _, err := w.exec(ctx, "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?", amount, w.w); err != nil {
		return err
	}
	var wName, wS1, wS2, wCity, wState, wZip string
	if err := w.queryRow(ctx, "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = ?",
		[]any{w.w}, &wName, &wS1, &wS2, &wCity, &wState, &wZip); err != nil {
		return err
	}
	if _, err := w.exec(ctx, "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?", amount, w.w, p.d); err != nil {
		return err
	}
	var dName, dS1, dS2, dCity, dState, dZip string
	if err := w.queryRow(ctx, "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = ? AND d_id = ?",
		[]any{w.w, p.d}, &dName, &dS1, &dS2, &dCity, &dState, &dZip); err != nil {
		return err
	}
	c := p.cust.c
	if p.cust.byName {
		var err error
		if c, err = w.customerByName(ctx, p.cw, p.cd, p.cust.last); err != nil {
			return err
		}
	}
	var first, middle, last, s1, s2, city, state, zip, phone, since, credit, creditLim, discount, balance, ytd string
	var cnt int
	if err := w.queryRow(ctx, "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, "+
		"c_credit_lim, c_discount, c_balance, c_ytd_payment, c_payment_cnt FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE",
		[]any{p.cw, p.cd, c}, &first, &middle, &last, &s1, &s2, &city, &state, &zip, &phone, &since, &credit,
		&creditLim, &discount, &balance, &ytd, &cnt); err != nil {
		return err
	}
	bal, err := cents(balance)
	if err != nil {
		return err
	}
	ytdC, err := cents(ytd)
	if err != nil {
		return err
	}
	bal -= p.amount
	ytdC += p.amount
	cnt++
	if credit == "BC" {
		var data string
		if err := w.queryRow(ctx, "SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
			[]any{p.cw, p.cd, c}, &data); err != nil {
			return err
		}
		data = fmt.Sprintf("%d %d %d %d %d %s | %s", c, p.cd, p.cw, p.d, w.w, amount, data)
		if len(data) > 500 {
			data = data[:500]
		}
		if _, err := w.exec(ctx, "UPDATE customer SET c_balance = ?, c_ytd_payment = ?, c_payment_cnt = ?, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
			money(bal), money(ytdC), cnt, data, p.cw, p.cd, c); err != nil {
			return err
		}
	} else {
		if _, err := w.exec(ctx, "UPDATE customer SET c_balance = ?, c_ytd_payment = ?, c_payment_cnt = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
			money(bal), money(ytdC), cnt, p.cw, p.cd, c); err != nil {
			return err
		}
	}
	now := time.Now().UTC().Truncate(time.Second)
	_, err = w.exec(ctx, "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		c, p.cd, p.cw, p.d, w.w, now, amount, wName+"    "+dName)
	return err
}

// --- Order-Status (Clause 2.6.2) ----------------------------------------------

func (w *worker) orderStatus(ctx context.Context, o *orderStatusInput) error {
	var c int
	var balance, first, middle, last string
	if o.cust.byName {
		var rows []struct {
			id                           int
			balance, first, middle, last string
		}
		q := "SELECT c_id, c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first"
		err := w.query(ctx, q, []any{w.w, o.d, o.cust.last}, func(r *sql.Rows) error {
			var x struct {
				id                           int
				balance, first, middle, last string
			}
			if err := r.Scan(&x.id, &x.balance, &x.first, &x.middle, &x.last); err != nil {
				return err
			}
			rows = append(rows, x)
			return nil
		})
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			return &stmtError{q, fmt.Errorf("%w: no customer named %s in district %d/%d", errInconsistent, o.cust.last, w.w, o.d)}
		}
		x := rows[(len(rows)-1)/2]
		c, balance, first, middle, last = x.id, x.balance, x.first, x.middle, x.last
	} else {
		c = o.cust.c
		if err := w.queryRow(ctx, "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
			[]any{w.w, o.d, c}, &balance, &first, &middle, &last); err != nil {
			return err
		}
	}
	var oID int
	var entry string
	var carrier sql.NullInt64
	found := false
	err := w.query(ctx, "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1",
		[]any{w.w, o.d, c}, func(r *sql.Rows) error {
			found = true
			return r.Scan(&oID, &entry, &carrier)
		})
	if err != nil || !found {
		return err // a customer without orders has nothing more to show
	}
	return w.query(ctx, "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
		[]any{w.w, o.d, oID}, func(r *sql.Rows) error {
			var item, supW, qty int
			var amount string
			var delivery sql.NullString
			return r.Scan(&item, &supW, &qty, &amount, &delivery)
		})
}

// --- Delivery (Clause 2.7.4) ----------------------------------------------------

// delivery delivers the oldest undelivered order of every district of the
// home warehouse in one database transaction: the oldest NEW-ORDER row of
// each district is read with FOR UPDATE, then the rows found are handled
// together with row constructor IN lists. A district without undelivered
// orders is skipped (Clause 2.7.4.2).
func (w *worker) delivery(ctx context.Context, carrier int) error {
	type dOrder struct{ d, o, c int }
	var orders []dOrder
	for d := 1; d <= w.run.scale.Districts; d++ {
		var o int
		found := false
		err := w.query(ctx, "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1 FOR UPDATE",
			[]any{w.w, d}, func(r *sql.Rows) error {
				found = true
				return r.Scan(&o)
			})
		if err != nil {
			return err
		}
		if found {
			orders = append(orders, dOrder{d: d, o: o})
		}
	}
	if len(orders) == 0 {
		return nil
	}
	keys := make([]any, 0, 3*len(orders))
	for _, x := range orders {
		keys = append(keys, w.w, x.d, x.o)
	}
	in := rowPlaceholders(len(orders), 3)

	q := "DELETE FROM new_order WHERE (no_w_id, no_d_id, no_o_id) IN (" + in + ")"
	res, err := w.exec(ctx, q, keys...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != int64(len(orders)) {
		return &stmtError{q, fmt.Errorf("%w: deleted %d rows, locked %d (args %v)", errInconsistent, n, len(orders), keys)}
	}

	byD := make(map[int]*dOrder, len(orders))
	for i := range orders {
		byD[orders[i].d] = &orders[i]
	}
	q = "SELECT o_d_id, o_c_id FROM orders WHERE (o_w_id, o_d_id, o_id) IN (" + in + ")"
	n := 0
	err = w.query(ctx, q, keys, func(r *sql.Rows) error {
		var d, c int
		if err := r.Scan(&d, &c); err != nil {
			return err
		}
		if x := byD[d]; x != nil {
			x.c = c
			n++
		}
		return nil
	})
	if err != nil {
		return err
	}
	if n != len(orders) {
		return &stmtError{q, fmt.Errorf("%w: %d orders for %d new_order rows (args %v)", errInconsistent, n, len(orders), keys)}
	}
	if _, err := w.exec(ctx, "UPDATE orders SET o_carrier_id = ? WHERE (o_w_id, o_d_id, o_id) IN ("+in+")", append([]any{carrier}, keys...)...); err != nil {
		return err
	}
	now := time.Now().UTC().Truncate(time.Second)
	if _, err := w.exec(ctx, "UPDATE order_line SET ol_delivery_d = ? WHERE (ol_w_id, ol_d_id, ol_o_id) IN ("+in+")", append([]any{now}, keys...)...); err != nil {
		return err
	}
	sums := make(map[int]string, len(orders))
	q = "SELECT ol_d_id, SUM(ol_amount) FROM order_line WHERE (ol_w_id, ol_d_id, ol_o_id) IN (" + in + ") GROUP BY ol_d_id"
	err = w.query(ctx, q, keys, func(r *sql.Rows) error {
		var d int
		var s string
		if err := r.Scan(&d, &s); err != nil {
			return err
		}
		sums[d] = s
		return nil
	})
	if err != nil {
		return err
	}
	for _, x := range orders {
		s, ok := sums[x.d]
		if !ok {
			return &stmtError{q, fmt.Errorf("%w: no order lines for order %d/%d/%d", errInconsistent, w.w, x.d, x.o)}
		}
		amt, err := cents(s)
		if err != nil {
			return err
		}
		if _, err := w.exec(ctx, "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
			money(amt), w.w, x.d, x.c); err != nil {
			return err
		}
	}
	return nil
}

// --- Stock-Level (Clause 2.8.2) -------------------------------------------------

func (w *worker) stockLevel(ctx context.Context, threshold int) error {
	var next int
	if err := w.queryRow(ctx, "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?", []any{w.w, w.slD}, &next); err != nil {
		return err
	}
	var low int
	return w.queryRow(ctx, "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock "+
		"WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id >= ? AND ol_o_id < ? AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?",
		[]any{w.w, w.slD, next - 20, next, w.w, threshold}, &low)
}
