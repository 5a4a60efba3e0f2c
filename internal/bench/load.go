package bench

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Multi-row INSERTs of the loader: at most this many rows or bytes each.
const (
	loadBatchRows  = 500
	loadBatchBytes = 256 << 10
	loadItemChunk  = 10000 // items (or stock rows) per load job
)

// createSchema drops the nine tables if they exist and creates them.
func createSchema(ctx context.Context, db *sql.DB) error {
	for _, t := range tableNames {
		if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+t); err != nil {
			return fmt.Errorf("DROP TABLE %s: %w", t, err)
		}
	}
	for i, ddl := range schemaDDL {
		if _, err := db.ExecContext(ctx, ddl); err != nil {
			return fmt.Errorf("CREATE TABLE %s: %w", tableNames[i], err)
		}
	}
	return nil
}

// loadJob fills one part of the database.
type loadJob struct {
	name string
	run  func(l *loader, r rng) error
}

// loader holds what the load jobs share.
type loader struct {
	ctx   context.Context
	db    *sql.DB
	scale Scale
	now   string // the load's timestamp literal (O_ENTRY_D, C_SINCE, H_DATE)
	rows  atomic.Int64
}

// load populates an empty schema (Clause 4.3.3.1) with threads connections in
// parallel, each job inserting with multi-row INSERTs in autocommit mode.
func load(ctx context.Context, db *sql.DB, scale Scale, threads int, seed uint64, progress func(rows int64)) (int64, error) {
	l := &loader{ctx: ctx, db: db, scale: scale, now: time.Now().UTC().Format("2006-01-02 15:04:05")}
	var jobs []loadJob
	for lo := 1; lo <= scale.Items; lo += loadItemChunk {
		lo, hi := lo, min(lo+loadItemChunk-1, scale.Items)
		jobs = append(jobs, loadJob{fmt.Sprintf("item %d-%d", lo, hi), func(l *loader, r rng) error { return l.items(r, lo, hi) }})
	}
	for w := 1; w <= scale.Warehouses; w++ {
		w := w
		jobs = append(jobs, loadJob{fmt.Sprintf("warehouse %d", w), func(l *loader, r rng) error { return l.warehouse(r, w) }})
		for d := 1; d <= scale.Districts; d++ {
			d := d
			jobs = append(jobs, loadJob{fmt.Sprintf("district %d/%d", w, d), func(l *loader, r rng) error { return l.district(r, w, d) }})
		}
		for lo := 1; lo <= scale.Items; lo += loadItemChunk {
			lo, hi := lo, min(lo+loadItemChunk-1, scale.Items)
			jobs = append(jobs, loadJob{fmt.Sprintf("stock %d/%d-%d", w, lo, hi), func(l *loader, r rng) error { return l.stock(r, w, lo, hi) }})
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	l.ctx = ctx
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range jobs {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	for t := 0; t < max(1, threads); t++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r := rng{rand.New(rand.NewPCG(seed, uint64(i)+1))}
				if err := jobs[i].run(l, r); err != nil {
					errOnce.Do(func() { firstErr = fmt.Errorf("loading %s: %w", jobs[i].name, err); cancel() })
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	if progress != nil {
		go func() {
			tk := time.NewTicker(time.Second)
			defer tk.Stop()
			for {
				select {
				case <-tk.C:
					progress(l.rows.Load())
				case <-done:
					return
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	if firstErr != nil {
		return l.rows.Load(), firstErr
	}
	return l.rows.Load(), ctx.Err()
}

// batch accumulates rows of one multi-row INSERT.
type batch struct {
	l      *loader
	prefix string
	sb     strings.Builder
	n      int
}

func (l *loader) batch(table, cols string) *batch {
	return &batch{l: l, prefix: "INSERT INTO " + table + " (" + cols + ") VALUES "}
}

// add appends one row; vals are int, int64, string (quoted), rawSQL (as is) or
// nil (NULL).
func (b *batch) add(vals ...any) error {
	if b.n == 0 {
		b.sb.WriteString(b.prefix)
	} else {
		b.sb.WriteByte(',')
	}
	b.sb.WriteByte('(')
	for i, v := range vals {
		if i > 0 {
			b.sb.WriteByte(',')
		}
		switch v := v.(type) {
		case nil:
			b.sb.WriteString("NULL")
		case int:
			b.sb.WriteString(strconv.Itoa(v))
		case int64:
			b.sb.WriteString(strconv.FormatInt(v, 10))
		case rawSQL:
			b.sb.WriteString(string(v))
		case string:
			b.sb.WriteByte('\'')
			for j := 0; j < len(v); j++ {
				if v[j] == '\'' || v[j] == '\\' {
					b.sb.WriteByte('\\')
				}
				b.sb.WriteByte(v[j])
			}
			b.sb.WriteByte('\'')
		default:
			panic(fmt.Sprintf("bench: batch value of type %T", v))
		}
	}
	b.sb.WriteByte(')')
	b.n++
	if b.n >= loadBatchRows || b.sb.Len() >= loadBatchBytes {
		return b.flush()
	}
	return nil
}

func (b *batch) flush() error {
	if b.n == 0 {
		return nil
	}
	if _, err := b.l.db.ExecContext(b.l.ctx, b.sb.String()); err != nil {
		return err
	}
	b.l.rows.Add(int64(b.n))
	b.n = 0
	b.sb.Reset()
	return nil
}

// rawSQL is a value written into the statement unquoted (a DECIMAL literal).
type rawSQL string

func (l *loader) items(r rng, lo, hi int) error {
	b := l.batch("item", "i_id, i_im_id, i_name, i_price, i_data")
	for i := lo; i <= hi; i++ {
		if err := b.add(i, r.uniform(1, 10000), r.aString(14, 24), rawSQL(money(int64(r.uniform(100, 10000)))), r.dataString()); err != nil {
			return err
		}
	}
	return b.flush()
}

// warehouse loads the WAREHOUSE row and its DISTRICT rows. W_YTD and D_YTD
// start at the sums of the initial HISTORY amounts (10.00 per customer:
// 300,000.00 and 30,000.00 at full scale), so Clauses 3.3.2.8 and 3.3.2.9
// hold for a scaled-down database too.
func (l *loader) warehouse(r rng, w int) error {
	dYTD := int64(l.scale.Customers) * 1000
	wb := l.batch("warehouse", "w_id, w_name, w_street_1, w_street_2, w_city, w_state, w_zip, w_tax, w_ytd")
	if err := wb.add(w, r.aString(6, 10), r.aString(10, 20), r.aString(10, 20), r.aString(10, 20), r.state(), r.zip(),
		rawSQL(fixed(int64(r.uniform(0, 2000)), 4)), rawSQL(money(dYTD*int64(l.scale.Districts)))); err != nil {
		return err
	}
	if err := wb.flush(); err != nil {
		return err
	}
	db := l.batch("district", "d_id, d_w_id, d_name, d_street_1, d_street_2, d_city, d_state, d_zip, d_tax, d_ytd, d_next_o_id")
	for d := 1; d <= l.scale.Districts; d++ {
		if err := db.add(d, w, r.aString(6, 10), r.aString(10, 20), r.aString(10, 20), r.aString(10, 20), r.state(), r.zip(),
			rawSQL(fixed(int64(r.uniform(0, 2000)), 4)), rawSQL(money(dYTD)), l.scale.Customers+1); err != nil {
			return err
		}
	}
	return db.flush()
}

func (l *loader) stock(r rng, w, lo, hi int) error {
	b := l.batch("stock", "s_i_id, s_w_id, s_quantity, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, "+
		"s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10, s_ytd, s_order_cnt, s_remote_cnt, s_data")
	for i := lo; i <= hi; i++ {
		vals := []any{i, w, r.uniform(10, 100)}
		for d := 0; d < 10; d++ {
			vals = append(vals, r.aString(24, 24))
		}
		vals = append(vals, 0, 0, 0, r.dataString())
		if err := b.add(vals...); err != nil {
			return err
		}
	}
	return b.flush()
}

// district loads one district's CUSTOMER, HISTORY, ORDERS, ORDER_LINE and
// NEW_ORDER rows.
func (l *loader) district(r rng, w, d int) error {
	sc := l.scale
	cb := l.batch("customer", "c_id, c_d_id, c_w_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, "+
		"c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_data")
	hb := l.batch("history", "h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data")
	for c := 1; c <= sc.Customers; c++ {
		var last string
		if c <= 1000 {
			last = lastName(c - 1)
		} else {
			last = lastName(r.nuRand(255, cLastLoad, 0, 999))
		}
		credit := "GC"
		if r.IntN(10) == 0 {
			credit = "BC"
		}
		if err := cb.add(c, d, w, r.aString(8, 16), "OE", last, r.aString(10, 20), r.aString(10, 20), r.aString(10, 20),
			r.state(), r.zip(), r.nString(16, 16), l.now, credit, rawSQL("50000.00"),
			rawSQL(fixed(int64(r.uniform(0, 5000)), 4)), rawSQL("-10.00"), rawSQL("10.00"), 1, 0, r.aString(300, 500)); err != nil {
			return err
		}
		if err := hb.add(c, d, w, d, w, l.now, rawSQL("10.00"), r.aString(12, 24)); err != nil {
			return err
		}
	}
	if err := cb.flush(); err != nil {
		return err
	}
	if err := hb.flush(); err != nil {
		return err
	}

	// Orders: O_C_ID is a random permutation of the customer ids.
	perm := r.Perm(sc.Customers)
	first := sc.firstUndelivered()
	ob := l.batch("orders", "o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local")
	lb := l.batch("order_line", "ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info")
	nb := l.batch("new_order", "no_o_id, no_d_id, no_w_id")
	for o := 1; o <= sc.Customers; o++ {
		delivered := o < first
		var carrier, delivery any
		if delivered {
			carrier, delivery = r.uniform(1, 10), l.now
		}
		olCnt := r.uniform(5, 15)
		if err := ob.add(o, d, w, perm[o-1]+1, l.now, carrier, olCnt, 1); err != nil {
			return err
		}
		for n := 1; n <= olCnt; n++ {
			amount := int64(0)
			if !delivered {
				amount = int64(r.uniform(1, 999999))
			}
			if err := lb.add(o, d, w, n, r.uniform(1, sc.Items), w, delivery, 5, rawSQL(money(amount)), r.aString(24, 24)); err != nil {
				return err
			}
		}
		if !delivered {
			if err := nb.add(o, d, w); err != nil {
				return err
			}
		}
	}
	for _, b := range []*batch{ob, lb, nb} {
		if err := b.flush(); err != nil {
			return err
		}
	}
	return nil
}
