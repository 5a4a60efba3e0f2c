// Package oltp is sysbench 1.0.20's oltp_* workloads (oltp_common.lua and
// the oltp_point_select, oltp_read_only, oltp_write_only, oltp_read_write
// and oltp_insert scripts) as a Go client: the same tables, statements,
// statement counts per transaction, random distributions and prepared
// statements, so that `lockstep bench oltp` measures what sysbench measures
// and a matrix runner can call Run for one (workload, threads, duration)
// cell and get a Result back.
package oltp

import (
	"fmt"
	"strings"
)

// Workload is one of sysbench's oltp_* scripts.
type Workload int

// The workloads, named as sysbench's scripts without the oltp_ prefix.
const (
	PointSelect Workload = iota
	ReadOnly
	WriteOnly
	ReadWrite
	Insert
	numWorkloads
)

var workloadNames = [numWorkloads]string{"point_select", "read_only", "write_only", "read_write", "insert"}

func (w Workload) String() string {
	if w < 0 || w >= numWorkloads {
		return fmt.Sprintf("Workload(%d)", int(w))
	}
	return workloadNames[w]
}

// Workloads lists every workload, in order.
func Workloads() []Workload {
	out := make([]Workload, numWorkloads)
	for i := range out {
		out[i] = Workload(i)
	}
	return out
}

// ParseWorkload accepts a workload's name with or without sysbench's
// "oltp_" prefix.
func ParseWorkload(s string) (Workload, error) {
	name := strings.TrimPrefix(strings.ToLower(s), "oltp_")
	for i, n := range workloadNames {
		if n == name {
			return Workload(i), nil
		}
	}
	return 0, fmt.Errorf("unknown workload %q (available: %s)", s, strings.Join(workloadNames[:], ", "))
}

// Options are oltp_common.lua's options, with its defaults from
// DefaultOptions.
type Options struct {
	Tables          int  // --tables (1)
	TableSize       int  // --table-size: rows per table (10000)
	RangeSize       int  // --range-size (100)
	PointSelects    int  // --point_selects per transaction (10; oltp_point_select always runs 1)
	SimpleRanges    int  // --simple_ranges (1)
	SumRanges       int  // --sum_ranges (1)
	OrderRanges     int  // --order_ranges (1)
	DistinctRanges  int  // --distinct_ranges (1)
	IndexUpdates    int  // --index_updates (1)
	NonIndexUpdates int  // --non_index_updates (1)
	DeleteInserts   int  // --delete_inserts (1)
	RangeSelects    bool // --range_selects (true)
	SkipTrx         bool // --skip_trx: autocommit, no BEGIN/COMMIT (false)
	Dist            Dist
}

// DefaultOptions are sysbench 1.0.20's defaults.
func DefaultOptions() Options {
	return Options{
		Tables: 1, TableSize: 10000, RangeSize: 100,
		PointSelects: 10, SimpleRanges: 1, SumRanges: 1, OrderRanges: 1, DistinctRanges: 1,
		IndexUpdates: 1, NonIndexUpdates: 1, DeleteInserts: 1,
		RangeSelects: true, Dist: DefaultDist(),
	}
}

// Validate reports the first invalid option.
func (o *Options) Validate() error {
	counts := []struct {
		name string
		n    int
	}{{"--point-selects", o.PointSelects}, {"--simple-ranges", o.SimpleRanges}, {"--sum-ranges", o.SumRanges},
		{"--order-ranges", o.OrderRanges}, {"--distinct-ranges", o.DistinctRanges}, {"--index-updates", o.IndexUpdates},
		{"--non-index-updates", o.NonIndexUpdates}, {"--delete-inserts", o.DeleteInserts}}
	for _, c := range counts {
		if c.n < 0 || c.n > 1000 {
			return fmt.Errorf("%s must be 0..1000, not %d", c.name, c.n)
		}
	}
	switch {
	case o.Tables < 1 || o.Tables > 10000:
		return fmt.Errorf("--tables must be 1..10000, not %d", o.Tables)
	case o.TableSize < 0 || o.TableSize > 1<<31-1:
		return fmt.Errorf("--table-size must be 0..2147483647, not %d", o.TableSize)
	case o.RangeSize < 1 || o.RangeSize > 1<<30:
		return fmt.Errorf("--range-size must be at least 1, not %d", o.RangeSize)
	}
	return o.Dist.Validate()
}

// Kind is one of the statements the scripts send.
type Kind int

// The statements of oltp_common.lua's stmt_defs, BEGIN and COMMIT (prepared
// too), and oltp_insert's INSERT (a text query, not prepared).
const (
	Begin Kind = iota
	Commit
	PointSel
	SimpleRange
	SumRange
	OrderRange
	DistinctRange
	IndexUpdate
	NonIndexUpdate
	Delete
	InsertRow   // delete_inserts' INSERT with the deleted id
	InsertQuery // oltp_insert's text INSERT with id 0 (AUTO_INCREMENT picks it)
	NumKinds
)

var kindNames = [NumKinds]string{"BEGIN", "COMMIT", "point select", "simple range", "sum range", "order range",
	"distinct range", "index update", "non-index update", "delete", "insert", "insert (text)"}

func (k Kind) String() string { return kindNames[k] }

// Class is sysbench's statistics class of a statement: its "reads",
// "writes" and "other" counters.
type Class int

// sysbench's query classes.
const (
	Read Class = iota
	Write
	Other
)

// Class returns the class sysbench counts the statement under.
func (k Kind) Class() Class {
	switch k {
	case Begin, Commit:
		return Other
	case PointSel, SimpleRange, SumRange, OrderRange, DistinctRange:
		return Read
	default:
		return Write
	}
}

// returnsRows says whether the statement is a SELECT.
func (k Kind) returnsRows() bool { return k.Class() == Read }

// SQL is the statement text for table n (1-based), as stmt_defs has it.
func (k Kind) SQL(n int) string {
	switch k {
	case Begin:
		return "BEGIN"
	case Commit:
		return "COMMIT"
	case PointSel:
		return fmt.Sprintf("SELECT c FROM sbtest%d WHERE id=?", n)
	case SimpleRange:
		return fmt.Sprintf("SELECT c FROM sbtest%d WHERE id BETWEEN ? AND ?", n)
	case SumRange:
		return fmt.Sprintf("SELECT SUM(k) FROM sbtest%d WHERE id BETWEEN ? AND ?", n)
	case OrderRange:
		return fmt.Sprintf("SELECT c FROM sbtest%d WHERE id BETWEEN ? AND ? ORDER BY c", n)
	case DistinctRange:
		return fmt.Sprintf("SELECT DISTINCT c FROM sbtest%d WHERE id BETWEEN ? AND ? ORDER BY c", n)
	case IndexUpdate:
		return fmt.Sprintf("UPDATE sbtest%d SET k=k+1 WHERE id=?", n)
	case NonIndexUpdate:
		return fmt.Sprintf("UPDATE sbtest%d SET c=? WHERE id=?", n)
	case Delete:
		return fmt.Sprintf("DELETE FROM sbtest%d WHERE id=?", n)
	case InsertRow:
		return fmt.Sprintf("INSERT INTO sbtest%d (id, k, c, pad) VALUES (?, ?, ?, ?)", n)
	}
	return "" // InsertQuery is built per call (insertQuery)
}

// prepared says whether the script runs the statement as a server-side
// prepared statement (everything but oltp_insert's INSERT).
func (k Kind) prepared() bool { return k != InsertQuery }

// Op is one statement of an event: the kind, the table (1-based) and the
// parameters in the order of the statement's placeholders.
type Op struct {
	Kind  Kind
	Table int
	Args  []any
}

// insertQuery is oltp_insert's statement: the values inlined, id 0.
func (o *Op) insertQuery() string {
	return fmt.Sprintf("INSERT INTO sbtest%d (id, k, c, pad) VALUES (%d, %d, '%s', '%s')",
		o.Table, 0, o.Args[0], o.Args[1], o.Args[2])
}

// Kinds lists the prepared statements a workload's thread prepares at its
// start (thread_init's prepare_statements), per table.
func (w Workload) Kinds(o *Options) []Kind {
	var ks []Kind
	trx := func() {
		if !o.SkipTrx {
			ks = append(ks, Begin, Commit)
		}
	}
	ranges := func() {
		if o.RangeSelects {
			ks = append(ks, SimpleRange, SumRange, OrderRange, DistinctRange)
		}
	}
	writes := func() { ks = append(ks, IndexUpdate, NonIndexUpdate, Delete, InsertRow) }
	switch w {
	case PointSelect:
		ks = append(ks, PointSel)
	case ReadOnly:
		ks = append(ks, PointSel)
		trx()
		ranges()
	case WriteOnly:
		trx()
		writes()
	case ReadWrite:
		trx()
		ks = append(ks, PointSel)
		ranges()
		writes()
	}
	return ks
}

// gen makes events: the statements of one transaction (one call of the
// script's event()), drawing random numbers in the script's order.
type gen struct {
	w Workload
	o Options
	r *rng
}

func (g *gen) table() int { return int(g.r.uniform(1, uint32(g.o.Tables))) }

// id is get_id(): sysbench.rand.default(1, table_size).
func (g *gen) id() int64 { return int64(g.r.def(1, uint32(g.o.TableSize))) }

// event appends one event's statements to ops[:0] and returns it.
func (g *gen) event(ops []Op) []Op {
	ops = ops[:0]
	o := &g.o
	switch g.w {
	case PointSelect:
		return g.pointSelects(ops, 1) // the script sets point_selects=1
	case Insert:
		t := g.table()
		k := g.id()
		return append(ops, Op{InsertQuery, t, []any{k, g.r.str(cTemplate), g.r.str(padTemplate)}})
	}
	if !o.SkipTrx {
		ops = append(ops, Op{Kind: Begin})
	}
	if g.w == ReadOnly || g.w == ReadWrite {
		ops = g.pointSelects(ops, o.PointSelects)
		if o.RangeSelects {
			ops = g.ranges(ops, SimpleRange, o.SimpleRanges)
			ops = g.ranges(ops, SumRange, o.SumRanges)
			ops = g.ranges(ops, OrderRange, o.OrderRanges)
			ops = g.ranges(ops, DistinctRange, o.DistinctRanges)
		}
	}
	if g.w == WriteOnly || g.w == ReadWrite {
		t := g.table()
		for range o.IndexUpdates {
			ops = append(ops, Op{IndexUpdate, t, []any{g.id()}})
		}
		t = g.table()
		for range o.NonIndexUpdates {
			c := g.r.str(cTemplate)
			ops = append(ops, Op{NonIndexUpdate, t, []any{c, g.id()}})
		}
		t = g.table()
		for range o.DeleteInserts {
			id, k := g.id(), g.id()
			ops = append(ops, Op{Delete, t, []any{id}},
				Op{InsertRow, t, []any{id, k, g.r.str(cTemplate), g.r.str(padTemplate)}})
		}
	}
	if !o.SkipTrx {
		ops = append(ops, Op{Kind: Commit})
	}
	return ops
}

// pointSelects is execute_point_selects: one table for all n.
func (g *gen) pointSelects(ops []Op, n int) []Op {
	t := g.table()
	for range n {
		ops = append(ops, Op{PointSel, t, []any{g.id()}})
	}
	return ops
}

// ranges is execute_range: one table, n ranges [id, id+range_size-1].
func (g *gen) ranges(ops []Op, k Kind, n int) []Op {
	t := g.table()
	for range n {
		id := g.id()
		ops = append(ops, Op{k, t, []any{id, id + int64(g.o.RangeSize) - 1}})
	}
	return ops
}
