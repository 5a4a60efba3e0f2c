package sqlfront

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"lockstep/internal/storage"
	"lockstep/internal/txn"
)

// Tabular EXPLAIN. go-mysql-server answers `EXPLAIN <query>` with one
// placeholder row (id 1, SELECT, every other column NULL). Explain builds
// MySQL's table instead from the analysed plan — what go-mysql-server will
// run — one row per table access in join order: the access type (const,
// eq_ref, ref, range, index lookups; ALL for a scan), the key and the
// length of the part of it used (MySQL's byte counts), what the key is
// compared with (const, or the columns of a lookup join), an estimate of
// the rows read, and Extra's "Using where" (a filter over the access),
// "Using filesort" (a sort over the result), "Using temporary" (GROUP BY)
// and "No tables used".
//
// Every SELECT has its own rows, numbered as MySQL numbers them (by their
// place in the text; explain_sub.go): a derived table's are DERIVED, a
// subquery's in an expression SUBQUERY, or DEPENDENT SUBQUERY when it
// reads the outer row — its lookups by the outer row's columns are ref
// (eq_ref on a whole unique key) with those columns in ref as
// db.table.column —, and the outer SELECT is then PRIMARY. A subquery
// go-mysql-server turned into a join (IN, EXISTS: a semi-join) is read as
// part of the outer SELECT, as MySQL shows a semi-join.
//
// What it does not do: possible_keys lists the key chosen only (lockstep
// has no index statistics to weigh others); rows is an estimate (1 for a
// unique point, the index entries in the range for other static index
// reads — counted, as MariaDB's index dives estimate them —, for a lookup
// by values known only when it runs (a lookup join's probe, a subquery's
// lookup by the outer row) the table's rows per distinct value of the key
// columns it fixes, over its first 100,000 rows (InnoDB's records per key;
// explain_keyrows.go), the table for a scan); filtered is always 100.00;
// a derived table's own row says 1 row.

// Explain returns MySQL's tabular EXPLAIN of query (an EXPLAIN statement)
// on connection connID, or nil when it cannot (the placeholder then
// stays).
func (fe *Frontend) Explain(connID uint32, query string) [][]sqltypes.Value {
	s := fe.session(connID)
	if s == nil {
		return nil
	}
	ctx := sql.NewContext(context.Background(), sql.WithSession(s))
	n, err := fe.Engine.AnalyzeQuery(ctx, query)
	if err != nil {
		return nil
	}
	d, ok := n.(*plan.DescribeQuery)
	if !ok || d.Format.Plan || d.Format.Analyze {
		return nil
	}
	var w explainWalk
	w.ctx = ctx
	w.kind = "SIMPLE"
	w.numbers, w.last = selectNumbers(query)
	w.used, w.shown = map[string]int{}, map[subKey]int{}
	switch d.Child.(type) {
	case *plan.Update:
		w.kind = "UPDATE"
	case *plan.DeleteFrom:
		w.kind = "DELETE"
	case *plan.InsertInto:
		w.kind = "INSERT"
	}
	w.walk(d.Child, 1, w.kind, false, false, "")
	if !w.reads(1) {
		// No table in the outer SELECT (its subqueries may read some).
		w.rows = append(w.rows, explainRow{id: 1, selectType: w.kind, extra: []string{"No tables used"}})
	}
	w.finish()
	s.ClearWarnings() // go-mysql-server's "placeholder" warning
	out := make([][]sqltypes.Value, len(w.rows))
	for i, r := range w.rows {
		out[i] = r.values()
	}
	return out
}

// explainRow is one row of the table.
type explainRow struct {
	id         int
	selectType string
	table      string
	access     string // "" for no table
	key        string
	keyLen     int
	ref        string
	rows       uint64
	extra      []string
}

func (r explainRow) values() []sqltypes.Value {
	str := func(s string) sqltypes.Value {
		if s == "" {
			return sqltypes.NULL
		}
		return sqltypes.MakeTrusted(querypb.Type_VARCHAR, []byte(s))
	}
	v := []sqltypes.Value{
		sqltypes.NewUint64(uint64(r.id)),
		str(r.selectType),
		str(r.table),
		sqltypes.NULL, // partitions
		str(r.access),
		str(r.key), // possible_keys: the chosen key
		str(r.key),
		sqltypes.NULL,
		str(r.ref),
		sqltypes.NULL,
		sqltypes.NULL,
		str(strings.Join(r.extra, "; ")),
	}
	if r.key != "" {
		v[7] = str(strconv.Itoa(r.keyLen))
	}
	if r.access != "" {
		v[9] = sqltypes.NewUint64(r.rows)
		v[10] = sqltypes.MakeTrusted(querypb.Type_FLOAT64, []byte("100.00"))
	}
	return v
}

type explainWalk struct {
	ctx  *sql.Context
	kind string
	rows []explainRow

	numbers map[string][]int // SELECT text -> its numbers (explain_sub.go)
	last    int              // the last SELECT number given
	used    map[string]int   // numbers taken per text
	shown   map[subKey]int   // subqueries whose rows are in

	keyStats map[keyStat]uint64 // keyRows' estimates (explain_keyrows.go)
}

// walk adds the rows of n's table accesses: filtered and sorted say a
// Filter or a Sort sits over n (down to the next table); alias names the
// table.
func (w *explainWalk) walk(n sql.Node, id int, selectType string, filtered, sorted bool, alias string) {
	w.subqueries(n, id)
	switch x := n.(type) {
	case *plan.Filter:
		w.walk(x.Child, id, selectType, true, sorted, alias)
		return
	case *plan.Sort:
		w.walk(x.Child, id, selectType, filtered, true, alias)
		return
	case *plan.TopN:
		w.walk(x.Child, id, selectType, filtered, true, alias)
		return
	case *plan.TableAlias:
		w.walk(x.Child, id, selectType, filtered, sorted, x.Name())
		return
	case *plan.GroupBy:
		// GROUP BY aggregates in a temporary table (go-mysql-server
		// hashes the groups): MySQL marks the first table it reads.
		first := len(w.rows)
		w.walk(x.Child, id, selectType, filtered, sorted, alias)
		for i := first; len(x.GroupByExprs) > 0 && i < len(w.rows); i++ {
			if w.rows[i].id == id {
				w.rows[i].addExtra("Using temporary")
				break
			}
		}
		return
	case *plan.SubqueryAlias:
		did, _ := w.selectID(x.TextDefinition, id, "<derived "+x.Name()+">")
		w.add(explainRow{id: id, selectType: selectType, table: "<derived" + strconv.Itoa(did) + ">", access: "ALL", rows: 1}, filtered, sorted)
		w.walk(x.Child, did, "DERIVED", false, false, "")
		return
	case *plan.IndexedTableAccess:
		w.add(w.indexRow(x, id, selectType, alias), filtered, sorted)
		return
	case *plan.ResolvedTable:
		if plan.IsDualTable(x.Table) {
			return
		}
		name := alias
		if name == "" {
			name = x.Name()
		}
		w.add(explainRow{id: id, selectType: selectType, table: name, access: "ALL", rows: tableRows(x.Table)}, filtered, sorted)
		return
	}
	first, before := true, len(w.rows)
	for _, c := range n.Children() {
		// A sort over a join sorts its result: MySQL marks the first table.
		w.walk(c, id, selectType, false, sorted && first, "")
		first = false
	}
	if filtered && len(w.rows) > before && w.rows[len(w.rows)-1].id == id {
		w.rows[len(w.rows)-1].addExtra("Using where")
	}
}

func (r *explainRow) addExtra(s string) {
	for _, e := range r.extra {
		if e == s {
			return
		}
	}
	r.extra = append(r.extra, s)
}

func (w *explainWalk) add(r explainRow, filtered, sorted bool) {
	if filtered {
		r.addExtra("Using where")
	}
	if sorted {
		r.addExtra("Using filesort")
	}
	w.rows = append(w.rows, r)
}

// indexRow describes an index access: a static lookup (ranges of
// constants) or the inner side of a lookup join.
func (w *explainWalk) indexRow(ita *plan.IndexedTableAccess, id int, selectType, alias string) explainRow {
	r := explainRow{id: id, selectType: selectType, table: ita.Name()}
	if alias != "" {
		r.table = alias
	}
	total := tableRows(ita.UnderlyingTable())
	idx := ita.Index()
	r.key = idx.ID()
	unique := idx.IsUnique()
	ix, _ := idx.(*index)
	ncols := len(idx.Expressions())
	used := ncols
	if ita.IsStatic() {
		lookup, err := ita.GetLookup(w.ctx, nil)
		ranges, ok := lookup.Ranges.(sql.MySQLRangeCollection)
		if err != nil || !ok || len(ranges) == 0 {
			r.access, r.rows = "range", estimate(total)
		} else {
			fixed := fixedPrefix(w.ctx, ranges[0])
			bounded := boundedPrefix(ranges[0])
			allPoints := true
			for _, rg := range ranges {
				if fixedPrefix(w.ctx, rg) != ncols {
					allPoints = false
				}
			}
			switch {
			case len(ranges) == 1 && bounded == 0:
				// No bound at all: the whole index is read in its order
				// (the sides of a merge join, an ordered scan).
				r.access, r.rows, used = "index", total, ncols
			case len(ranges) == 1 && fixed == ncols && unique:
				r.access, r.rows, used = "const", 1, ncols
				r.ref = constRefs(ncols)
			case len(ranges) == 1 && fixed > 0 && fixed == bounded:
				r.access, r.rows, used = "ref", w.rangeRows(ita, ix, ranges, total), fixed
				r.ref = constRefs(fixed)
			case allPoints && unique:
				r.access, r.rows, used = "range", uint64(len(ranges)), ncols
			default:
				r.access, r.rows, used = "range", w.rangeRows(ita, ix, ranges, total), max(bounded, 1)
			}
		}
	} else {
		keys := ita.Expressions()
		used = min(len(keys), ncols)
		refs := make([]string, 0, len(keys))
		for _, e := range keys {
			refs = append(refs, refName(e))
		}
		r.ref = strings.Join(refs, ",")
		if unique && used == ncols {
			r.access, r.rows = "eq_ref", 1
		} else {
			r.access, r.rows = "ref", estimate(total)
			if n, ok := w.keyRows(lockstepTable(ita.UnderlyingTable()), ix, used); ok {
				r.rows = n
			}
		}
	}
	if ix != nil {
		r.keyLen = ix.keyLen(used)
	}
	return r
}

// explainCountCap bounds the index entries EXPLAIN counts for one access.
const explainCountCap = 1_000_000

// rangeRows is the rows an index read over ranges reads: counted in the
// index (a consistent read of the current data, as MariaDB's index dives
// estimate them), or a tenth of the table when they cannot be counted or
// are more than explainCountCap.
func (w *explainWalk) rangeRows(ita *plan.IndexedTableAccess, ix *index, ranges sql.MySQLRangeCollection, total uint64) uint64 {
	t := lockstepTable(ita.UnderlyingTable())
	if t == nil || ix == nil || t.db == nil || t.db.fe == nil || t.db.fe.store == nil {
		return estimate(total)
	}
	var brs []storage.Range
	for _, rg := range ranges {
		if br, empty := ix.byteRange(w.ctx, rg); !empty {
			brs = append(brs, br)
		}
	}
	tx := t.db.fe.store.Begin(txn.ReadCommitted)
	defer tx.Rollback()
	var n uint64
	for _, br := range mergeRanges(brs) {
		err := tx.Scan(w.ctx, t.entry.store, ix.pos, br, false, 0, func(_, _ []byte) (bool, error) {
			n++
			return n < explainCountCap, nil
		})
		if err != nil || n >= explainCountCap {
			return max(n, estimate(total))
		}
	}
	return max(n, 1)
}

// lockstepTable returns the lockstep table under t, or nil.
func lockstepTable(t sql.Table) *Table {
	for {
		switch x := t.(type) {
		case *Table:
			return x
		case *indexedTable:
			t = x.Table
		case sql.TableWrapper:
			t = x.Underlying()
		default:
			return nil
		}
	}
}

// boundedPrefix is how many leading columns of a range have a bound.
func boundedPrefix(r sql.MySQLRange) int {
	k := 0
	for _, ce := range r {
		if ce.Type() == sql.RangeType_All {
			break
		}
		k++
	}
	return k
}

func constRefs(n int) string {
	return strings.TrimSuffix(strings.Repeat("const,", n), ",")
}

// refName renders a lookup's key expression as MySQL does:
// db.table.column for a column (of the outer row, for a subquery's
// lookup), const for a constant, func for anything else.
func refName(e sql.Expression) string {
	switch x := e.(type) {
	case *expression.GetField:
		name := x.Table() + "." + x.Name()
		if x.Database() != "" {
			name = x.Database() + "." + name
		}
		return strings.ToLower(name)
	case *expression.Literal:
		return "const"
	}
	return "func"
}

// estimate is the rows estimate of a non-unique index read: a tenth of the
// table (lockstep keeps no index statistics).
func estimate(total uint64) uint64 {
	return max(total/10, 1)
}

// tableRows is a table's row count (its storage's live-row counter).
func tableRows(t sql.Table) uint64 {
	for {
		switch x := t.(type) {
		case *Table:
			if n := x.entry.store.ApproxRows(); n > 0 {
				return uint64(n)
			}
			return 1
		case *indexedTable: // an index access's table
			t = x.Table
			continue
		case sql.TableWrapper:
			t = x.Underlying()
			continue
		}
		return 1
	}
}

// keyLen is MySQL's key_len for the first n columns of the index: the
// bytes of each column's key part, plus one for a nullable column.
func (ix *index) keyLen(n int) int {
	total := 0
	for _, kc := range ix.codec.cols[:min(n, len(ix.codec.cols))] {
		col := ix.t.schema.Schema[kc.ord]
		total += keyPartLen(col.Type, kc.prefix)
		if col.Nullable {
			total++
		}
	}
	return total
}

// keyPartLen is the bytes MySQL counts for one key part of type t (prefix:
// a prefix length in characters, 0 for the whole value).
func keyPartLen(t sql.Type, prefix int) int {
	switch {
	case types.IsInteger(t):
		switch t.Type() {
		case sqltypes.Int8, sqltypes.Uint8:
			return 1
		case sqltypes.Int16, sqltypes.Uint16:
			return 2
		case sqltypes.Int24, sqltypes.Uint24:
			return 3
		case sqltypes.Int32, sqltypes.Uint32:
			return 4
		}
		return 8
	case t.Type() == sqltypes.Float32:
		return 4
	case t.Type() == sqltypes.Float64:
		return 8
	case types.IsDecimal(t):
		d := t.(sql.DecimalType)
		return decimalBytes(int(d.Precision())-int(d.Scale())) + decimalBytes(int(d.Scale()))
	case t.Type() == sqltypes.Year:
		return 1
	case t.Type() == sqltypes.Date:
		return 3
	case types.IsTime(t) || t.Type() == sqltypes.Time:
		base := map[querypb.Type]int{sqltypes.Datetime: 5, sqltypes.Timestamp: 4, sqltypes.Time: 3}[t.Type()]
		if dt, ok := t.(sql.DatetimeType); ok {
			base += (dt.Precision() + 1) / 2
		}
		return base
	case types.IsEnum(t):
		return 2
	case types.IsSet(t):
		return 8
	case types.IsText(t) || types.IsBinaryType(t):
		st, ok := t.(sql.StringType)
		if !ok {
			return 0
		}
		chars := int(st.MaxCharacterLength())
		if prefix > 0 && prefix < chars {
			chars = prefix
		}
		perChar := int(st.CharacterSet().MaxLength())
		if types.IsBinaryType(t) {
			perChar = 1
		}
		n := chars * perChar
		switch t.Type() {
		case sqltypes.Char, sqltypes.Binary:
			return n
		}
		return n + 2
	}
	return 0
}

// decimalBytes is the bytes MySQL's packed DECIMAL uses for digits digits.
func decimalBytes(digits int) int {
	partial := [...]int{0, 1, 1, 2, 2, 3, 3, 4, 4, 4}
	return digits/9*4 + partial[digits%9]
}

// errMax1Row is go-mysql-server's error for EXPLAIN PLAN of a
// single-table UPDATE or DELETE by a whole key: the described statement's
// point-read marker makes its handler expect one row, and lockstep's rule
// that clears it (explainRowsRule) does not run for those statements.
const errMax1Row = "max1Row iterator returned more than one row"

// IsMax1RowExplain reports whether err is that failure of the EXPLAIN
// statement query.
func IsMax1RowExplain(query string, err error) bool {
	return err != nil && isExplainText(query) && strings.Contains(err.Error(), errMax1Row)
}

// ExplainPlan runs an EXPLAIN statement on connection connID and returns
// its rows as text columns, without go-mysql-server's at-most-one-row
// check (see errMax1Row).
func (fe *Frontend) ExplainPlan(connID uint32, query string) (*sqltypes.Result, error) {
	s := fe.session(connID)
	if s == nil {
		return nil, fmt.Errorf("lockstep: no session %d", connID)
	}
	ctx := sql.NewContext(context.Background(), sql.WithSession(s)).WithQuery(query)
	sch, iter, _, err := fe.Engine.Query(ctx, query)
	if err != nil {
		return nil, err
	}
	rows, err := sql.RowIterToRows(ctx, iter)
	if err != nil {
		return nil, err
	}
	res := &sqltypes.Result{Fields: make([]*querypb.Field, len(sch))}
	for i, c := range sch {
		res.Fields[i] = &querypb.Field{Name: c.Name, Type: querypb.Type_VARCHAR,
			Charset: uint32(sql.CharacterSet_utf8mb4), ColumnLength: 65535}
	}
	for _, r := range rows {
		vals := make([]sqltypes.Value, len(r))
		for i, v := range r {
			if v == nil {
				vals[i] = sqltypes.NULL
				continue
			}
			vals[i] = sqltypes.NewVarChar(fmt.Sprint(v))
		}
		res.Rows = append(res.Rows, vals)
	}
	return res, nil
}
