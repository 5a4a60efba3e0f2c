package bench

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
)

// CheckResult is the outcome of one consistency condition of Clause 3.3.2.
type CheckResult struct {
	Clause string // "3.3.2.1"
	Name   string
	Pass   bool
	Detail string // what was compared, or the first violations
}

type dKey struct{ w, d int }
type oKey struct{ w, d, o int }
type cKey struct{ w, d, c int }

// checker runs the consistency checks on a quiet database (no transactions
// running), reading everything it compares with plain queries.
type checker struct {
	ctx   context.Context
	db    *sql.DB
	scale Scale
	out   []CheckResult
	notes map[string]bool
}

// queryAll runs q and calls scan for each row.
func (k *checker) queryAll(q string, scan func(r *sql.Rows) error) error {
	rows, err := k.db.QueryContext(k.ctx, q)
	if err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	defer rows.Close()
	if cts, err := rows.ColumnTypes(); err == nil {
		for _, ct := range cts {
			if t := ct.DatabaseTypeName(); strings.HasPrefix(ct.Name(), "SUM(") && (t == "DOUBLE" || t == "FLOAT") {
				k.notes[fmt.Sprintf("the server returned %s as %s, not DECIMAL; compared by value", ct.Name(), t)] = true
			}
		}
	}
	for rows.Next() {
		if err := scan(rows); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	return nil
}

func dec(s sql.NullString) (int64, error) {
	if !s.Valid {
		return 0, nil
	}
	v, ok := parseFixed(s.String, 2)
	if !ok {
		return 0, fmt.Errorf("bad DECIMAL value %q", s.String)
	}
	return v, nil
}

// violations collects the first few failures of a check.
type violations struct {
	n     int
	first []string
}

func (v *violations) add(format string, args ...any) {
	v.n++
	if len(v.first) < 5 {
		v.first = append(v.first, fmt.Sprintf(format, args...))
	}
}

func (k *checker) result(clause, name string, err error, v *violations, okDetail string) {
	r := CheckResult{Clause: clause, Name: name}
	switch {
	case err != nil:
		r.Detail = "query failed: " + err.Error()
	case v.n > 0:
		r.Detail = fmt.Sprintf("%d violations: %s", v.n, strings.Join(v.first, "; "))
	default:
		r.Pass = true
		r.Detail = okDetail
	}
	k.out = append(k.out, r)
}

// runChecks evaluates Clause 3.3.2.1 to 3.3.2.12 (3.3.2.11 with the number of
// initially delivered orders of a possibly scaled-down database in place of
// 2,100). notes are observations that are not failures (a result type that
// differs from MySQL's).
func runChecks(ctx context.Context, db *sql.DB, scale Scale) (results []CheckResult, notes []string) {
	k := &checker{ctx: ctx, db: db, scale: scale, notes: map[string]bool{}}

	// Per warehouse and district aggregates used by several checks.
	wYTD := map[int]int64{}
	dYTD := map[dKey]int64{}
	dNext := map[dKey]int{}
	errW := k.queryAll("SELECT w_id, w_ytd FROM warehouse", func(r *sql.Rows) error {
		var w int
		var y sql.NullString
		if err := r.Scan(&w, &y); err != nil {
			return err
		}
		v, err := dec(y)
		wYTD[w] = v
		return err
	})
	errD := k.queryAll("SELECT d_w_id, d_id, d_ytd, d_next_o_id FROM district", func(r *sql.Rows) error {
		var key dKey
		var y sql.NullString
		var next int
		if err := r.Scan(&key.w, &key.d, &y, &next); err != nil {
			return err
		}
		v, err := dec(y)
		dYTD[key], dNext[key] = v, next
		return err
	})

	// 3.3.2.1: W_YTD = sum(D_YTD), the sum computed by the server.
	{
		v := &violations{}
		err := firstErr(errW, k.queryAll("SELECT d_w_id, SUM(d_ytd) FROM district GROUP BY d_w_id", func(r *sql.Rows) error {
			var w int
			var s sql.NullString
			if err := r.Scan(&w, &s); err != nil {
				return err
			}
			sum, err := dec(s)
			if err != nil {
				return err
			}
			if sum != wYTD[w] {
				v.add("warehouse %d: W_YTD %s, sum(D_YTD) %s", w, money(wYTD[w]), money(sum))
			}
			return nil
		}))
		k.result("3.3.2.1", "W_YTD = sum(D_YTD)", err, v, fmt.Sprintf("%d warehouses", len(wYTD)))
	}

	// Orders per district, and per order.
	type dAgg struct {
		maxO, count, olSum, nullCarrier int
	}
	oAgg := map[dKey]*dAgg{}
	type order struct {
		c, olCnt  int
		delivered bool
	}
	orders := map[oKey]order{}
	errO := k.queryAll("SELECT o_w_id, o_d_id, o_id, o_c_id, o_ol_cnt, o_carrier_id FROM orders", func(r *sql.Rows) error {
		var key oKey
		var c, cnt int
		var carrier sql.NullInt64
		if err := r.Scan(&key.w, &key.d, &key.o, &c, &cnt, &carrier); err != nil {
			return err
		}
		dk := dKey{key.w, key.d}
		a := oAgg[dk]
		if a == nil {
			a = &dAgg{}
			oAgg[dk] = a
		}
		a.maxO = max(a.maxO, key.o)
		a.count++
		a.olSum += cnt
		if !carrier.Valid {
			a.nullCarrier++
		}
		orders[key] = order{c: c, olCnt: cnt, delivered: carrier.Valid}
		return nil
	})
	type noAgg struct{ maxO, minO, count int }
	noD := map[dKey]*noAgg{}
	newOrders := map[oKey]bool{}
	errNO := k.queryAll("SELECT no_w_id, no_d_id, no_o_id FROM new_order", func(r *sql.Rows) error {
		var key oKey
		if err := r.Scan(&key.w, &key.d, &key.o); err != nil {
			return err
		}
		dk := dKey{key.w, key.d}
		a := noD[dk]
		if a == nil {
			a = &noAgg{maxO: key.o, minO: key.o}
			noD[dk] = a
		}
		a.maxO, a.minO = max(a.maxO, key.o), min(a.minO, key.o)
		a.count++
		newOrders[key] = true
		return nil
	})
	// The server's own aggregates for 3.3.2.2 and 3.3.2.3.
	srvMaxO := map[dKey]int{}
	errMaxO := k.queryAll("SELECT o_w_id, o_d_id, MAX(o_id) FROM orders GROUP BY o_w_id, o_d_id", func(r *sql.Rows) error {
		var key dKey
		var m int
		if err := r.Scan(&key.w, &key.d, &m); err != nil {
			return err
		}
		srvMaxO[key] = m
		return nil
	})
	srvNO := map[dKey]noAgg{}
	errNOAgg := k.queryAll("SELECT no_w_id, no_d_id, MAX(no_o_id), MIN(no_o_id), COUNT(*) FROM new_order GROUP BY no_w_id, no_d_id", func(r *sql.Rows) error {
		var key dKey
		var a noAgg
		if err := r.Scan(&key.w, &key.d, &a.maxO, &a.minO, &a.count); err != nil {
			return err
		}
		srvNO[key] = a
		return nil
	})
	districtKeys := make([]dKey, 0, len(dNext))
	for key := range dNext {
		districtKeys = append(districtKeys, key)
	}
	sort.Slice(districtKeys, func(i, j int) bool {
		if districtKeys[i].w != districtKeys[j].w {
			return districtKeys[i].w < districtKeys[j].w
		}
		return districtKeys[i].d < districtKeys[j].d
	})

	// 3.3.2.2: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID).
	{
		v := &violations{}
		empty := 0
		for _, key := range districtKeys {
			want := dNext[key] - 1
			if m := srvMaxO[key]; m != want {
				v.add("district %d/%d: D_NEXT_O_ID-1 %d, max(O_ID) %d", key.w, key.d, want, m)
			}
			if a := oAgg[key]; a == nil || a.maxO != want {
				got := 0
				if a != nil {
					got = a.maxO
				}
				v.add("district %d/%d: D_NEXT_O_ID-1 %d, highest O_ID read %d", key.w, key.d, want, got)
			}
			if a, ok := srvNO[key]; !ok {
				empty++ // every order delivered: no max(NO_O_ID) to compare
			} else if a.maxO != want {
				v.add("district %d/%d: D_NEXT_O_ID-1 %d, max(NO_O_ID) %d", key.w, key.d, want, a.maxO)
			}
		}
		detail := fmt.Sprintf("%d districts", len(districtKeys))
		if empty > 0 {
			detail += fmt.Sprintf(" (%d without undelivered orders: max(NO_O_ID) not compared)", empty)
		}
		k.result("3.3.2.2", "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)", firstErr(errD, errO, errMaxO, errNOAgg), v, detail)
	}

	// 3.3.2.3: max(NO_O_ID) - min(NO_O_ID) + 1 = count(NEW_ORDER rows).
	{
		v := &violations{}
		for _, key := range districtKeys {
			a, ok := srvNO[key]
			if !ok {
				continue
			}
			if a.maxO-a.minO+1 != a.count {
				v.add("district %d/%d: max %d - min %d + 1 != count %d", key.w, key.d, a.maxO, a.minO, a.count)
			}
			if mine := noD[key]; mine == nil || mine.count != a.count || mine.maxO != a.maxO || mine.minO != a.minO {
				v.add("district %d/%d: server's aggregate %+v differs from the rows read %+v", key.w, key.d, a, mine)
			}
		}
		k.result("3.3.2.3", "max(NO_O_ID) - min(NO_O_ID) + 1 = count(NEW_ORDER)", firstErr(errNO, errNOAgg), v,
			fmt.Sprintf("%d districts, %d undelivered orders", len(districtKeys), len(newOrders)))
	}

	// Order lines per order: count, delivered count, delivered amount.
	type olAgg struct {
		count, delivered int
		deliveredAmount  int64
	}
	ol := map[oKey]*olAgg{}
	olD := map[dKey]int{}
	errOL := k.queryAll("SELECT ol_w_id, ol_d_id, ol_o_id, COUNT(*), COUNT(ol_delivery_d), "+
		"SUM(CASE WHEN ol_delivery_d IS NULL THEN 0 ELSE ol_amount END) FROM order_line GROUP BY ol_w_id, ol_d_id, ol_o_id", func(r *sql.Rows) error {
		var key oKey
		a := &olAgg{}
		var amt sql.NullString
		if err := r.Scan(&key.w, &key.d, &key.o, &a.count, &a.delivered, &amt); err != nil {
			return err
		}
		v, err := dec(amt)
		a.deliveredAmount = v
		ol[key] = a
		return err
	})
	errOLD := k.queryAll("SELECT ol_w_id, ol_d_id, COUNT(*) FROM order_line GROUP BY ol_w_id, ol_d_id", func(r *sql.Rows) error {
		var key dKey
		var n int
		if err := r.Scan(&key.w, &key.d, &n); err != nil {
			return err
		}
		olD[key] = n
		return nil
	})

	// 3.3.2.4: sum(O_OL_CNT) = count(ORDER_LINE rows) per district.
	{
		v := &violations{}
		lines := 0
		for _, key := range districtKeys {
			sum := 0
			if a := oAgg[key]; a != nil {
				sum = a.olSum
			}
			if sum != olD[key] {
				v.add("district %d/%d: sum(O_OL_CNT) %d, count(ORDER_LINE) %d", key.w, key.d, sum, olD[key])
			}
			lines += olD[key]
		}
		k.result("3.3.2.4", "sum(O_OL_CNT) = count(ORDER_LINE)", firstErr(errO, errOLD), v,
			fmt.Sprintf("%d districts, %d order lines", len(districtKeys), lines))
	}

	// 3.3.2.5: O_CARRIER_ID is NULL iff the order is in NEW_ORDER.
	{
		v := &violations{}
		for key, o := range orders {
			if !o.delivered != newOrders[key] {
				v.add("order %d/%d/%d: delivered %v, in NEW_ORDER %v", key.w, key.d, key.o, o.delivered, newOrders[key])
			}
		}
		for key := range newOrders {
			if _, ok := orders[key]; !ok {
				v.add("NEW_ORDER %d/%d/%d has no ORDERS row", key.w, key.d, key.o)
			}
		}
		k.result("3.3.2.5", "O_CARRIER_ID NULL iff in NEW_ORDER", firstErr(errO, errNO), v, fmt.Sprintf("%d orders", len(orders)))
	}

	// 3.3.2.6: O_OL_CNT = number of its ORDER_LINE rows.
	// 3.3.2.7: OL_DELIVERY_D NULL iff O_CARRIER_ID NULL.
	{
		v6, v7 := &violations{}, &violations{}
		for key, o := range orders {
			a := ol[key]
			if a == nil {
				v6.add("order %d/%d/%d: O_OL_CNT %d, no order lines", key.w, key.d, key.o, o.olCnt)
				continue
			}
			if a.count != o.olCnt {
				v6.add("order %d/%d/%d: O_OL_CNT %d, %d order lines", key.w, key.d, key.o, o.olCnt, a.count)
			}
			want := 0
			if o.delivered {
				want = a.count
			}
			if a.delivered != want {
				v7.add("order %d/%d/%d: carrier set %v, %d of %d lines with OL_DELIVERY_D", key.w, key.d, key.o, o.delivered, a.delivered, a.count)
			}
		}
		for key := range ol {
			if _, ok := orders[key]; !ok {
				v6.add("order lines of %d/%d/%d have no ORDERS row", key.w, key.d, key.o)
			}
		}
		k.result("3.3.2.6", "O_OL_CNT = count(ORDER_LINE) per order", firstErr(errO, errOL), v6, fmt.Sprintf("%d orders", len(orders)))
		k.result("3.3.2.7", "OL_DELIVERY_D NULL iff O_CARRIER_ID NULL", firstErr(errO, errOL), v7, fmt.Sprintf("%d orders", len(orders)))
	}

	// History sums per warehouse, district and customer.
	hW := map[int]int64{}
	hD := map[dKey]int64{}
	errHW := k.queryAll("SELECT h_w_id, SUM(h_amount) FROM history GROUP BY h_w_id", func(r *sql.Rows) error {
		var w int
		var s sql.NullString
		if err := r.Scan(&w, &s); err != nil {
			return err
		}
		v, err := dec(s)
		hW[w] = v
		return err
	})
	errHD := k.queryAll("SELECT h_w_id, h_d_id, SUM(h_amount) FROM history GROUP BY h_w_id, h_d_id", func(r *sql.Rows) error {
		var key dKey
		var s sql.NullString
		if err := r.Scan(&key.w, &key.d, &s); err != nil {
			return err
		}
		v, err := dec(s)
		hD[key] = v
		return err
	})

	// 3.3.2.8: W_YTD = sum(H_AMOUNT) per warehouse.
	{
		v := &violations{}
		for w, y := range wYTD {
			if hW[w] != y {
				v.add("warehouse %d: W_YTD %s, sum(H_AMOUNT) %s", w, money(y), money(hW[w]))
			}
		}
		k.result("3.3.2.8", "W_YTD = sum(H_AMOUNT)", firstErr(errW, errHW), v, fmt.Sprintf("%d warehouses", len(wYTD)))
	}
	// 3.3.2.9: D_YTD = sum(H_AMOUNT) per district.
	{
		v := &violations{}
		for _, key := range districtKeys {
			if hD[key] != dYTD[key] {
				v.add("district %d/%d: D_YTD %s, sum(H_AMOUNT) %s", key.w, key.d, money(dYTD[key]), money(hD[key]))
			}
		}
		k.result("3.3.2.9", "D_YTD = sum(H_AMOUNT)", firstErr(errD, errHD), v, fmt.Sprintf("%d districts", len(districtKeys)))
	}

	// Customers.
	type cust struct {
		balance, ytd int64
		deliveries   int
	}
	custs := map[cKey]cust{}
	deliveriesD := map[dKey]int{}
	errC := k.queryAll("SELECT c_w_id, c_d_id, c_id, c_balance, c_ytd_payment, c_delivery_cnt FROM customer", func(r *sql.Rows) error {
		var key cKey
		var b, y sql.NullString
		var c cust
		if err := r.Scan(&key.w, &key.d, &key.c, &b, &y, &c.deliveries); err != nil {
			return err
		}
		var err error
		if c.balance, err = dec(b); err != nil {
			return err
		}
		if c.ytd, err = dec(y); err != nil {
			return err
		}
		custs[key] = c
		deliveriesD[dKey{key.w, key.d}] += c.deliveries
		return nil
	})
	hC := map[cKey]int64{}
	errHC := k.queryAll("SELECT h_c_w_id, h_c_d_id, h_c_id, SUM(h_amount) FROM history GROUP BY h_c_w_id, h_c_d_id, h_c_id", func(r *sql.Rows) error {
		var key cKey
		var s sql.NullString
		if err := r.Scan(&key.w, &key.d, &key.c, &s); err != nil {
			return err
		}
		v, err := dec(s)
		hC[key] = v
		return err
	})
	// Delivered order-line amounts per customer.
	olC := map[cKey]int64{}
	for key, o := range orders {
		if a := ol[key]; a != nil {
			olC[cKey{key.w, key.d, o.c}] += a.deliveredAmount
		}
	}

	// 3.3.2.10: C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT).
	// 3.3.2.12: C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT).
	{
		v10, v12 := &violations{}, &violations{}
		for key, c := range custs {
			if c.balance != olC[key]-hC[key] {
				v10.add("customer %d/%d/%d: C_BALANCE %s, delivered %s - paid %s", key.w, key.d, key.c, money(c.balance), money(olC[key]), money(hC[key]))
			}
			if c.balance+c.ytd != olC[key] {
				v12.add("customer %d/%d/%d: C_BALANCE %s + C_YTD_PAYMENT %s, delivered %s", key.w, key.d, key.c, money(c.balance), money(c.ytd), money(olC[key]))
			}
		}
		err := firstErr(errO, errOL, errC, errHC)
		k.result("3.3.2.10", "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT)", err, v10, fmt.Sprintf("%d customers", len(custs)))
		k.result("3.3.2.12", "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT)", firstErr(errO, errOL, errC), v12, fmt.Sprintf("%d customers", len(custs)))
	}

	// 3.3.2.11: count(ORDERS) - count(NEW_ORDER) = initially delivered
	// orders + sum(C_DELIVERY_CNT), per district.
	{
		v := &violations{}
		initial := k.scale.firstUndelivered() - 1
		for _, key := range districtKeys {
			no := 0
			if a := noD[key]; a != nil {
				no = a.count
			}
			oc := 0
			if a := oAgg[key]; a != nil {
				oc = a.count
			}
			if oc-no != initial+deliveriesD[key] {
				v.add("district %d/%d: %d orders - %d new orders != %d + sum(C_DELIVERY_CNT) %d", key.w, key.d, oc, no, initial, deliveriesD[key])
			}
		}
		k.result("3.3.2.11", fmt.Sprintf("count(ORDERS) - count(NEW_ORDER) = %d + sum(C_DELIVERY_CNT)", initial), firstErr(errO, errNO, errC), v,
			fmt.Sprintf("%d districts", len(districtKeys)))
	}
	sort.SliceStable(k.out, func(i, j int) bool { return clauseLess(k.out[i].Clause, k.out[j].Clause) })
	for n := range k.notes {
		notes = append(notes, n)
	}
	sort.Strings(notes)
	return k.out, notes
}

func clauseLess(a, b string) bool {
	var x, y int
	fmt.Sscanf(a[strings.LastIndexByte(a, '.')+1:], "%d", &x)
	fmt.Sscanf(b[strings.LastIndexByte(b, '.')+1:], "%d", &y)
	return x < y
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
