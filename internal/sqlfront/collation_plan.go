package sqlfront

import (
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/iters"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// Equality under a collation where go-mysql-server hashes values.
//
// go-mysql-server compares strings under their collation (WHERE, GROUP BY,
// ORDER BY, index lookups), but some operators find equal values by
// hashing the values themselves (sql.HashOf, or the value as a map key):
// a hash join's lookup table, DISTINCT (also UNION's) and COUNT(DISTINCT).
// Under a case-insensitive collation — MySQL 8's default, collation.go —
// 'Alice' and 'alice' are equal but hash apart, so a hash join on names
// drops matching rows and DISTINCT keeps both. lockstep corrects the three:
//
//   - collationHashRule (post-analysis) hashes a hash join's string keys
//     by their collation weights: each key expression of a HashLookup that
//     compares two strings of one non-binary collation is wrapped in
//     weightKey on both sides (the join's own condition, evaluated on
//     every candidate pair, still compares the values). It wraps the
//     string argument of COUNT(DISTINCT ...) the same way.
//   - execOverride builds DISTINCT (plain and ordered) and UNION DISTINCT
//     with collationDistinctIter when a column of its input is such a
//     string.
//
// Left as go-mysql-server does them: GROUP_CONCAT(DISTINCT ...),
// INTERSECT and EXCEPT (docs/sqlfront.md).

const collationHashRuleID analyzer.RuleId = 1<<20 + 11

// hashedCollation returns the collation a string type's values compare
// under, and whether equality under it differs from byte equality (binary
// strings compare as bytes; every other collation is hashed by weights,
// the _bin ones included, for their trailing-space rule).
func hashedCollation(t sql.Type) (sql.CollationID, bool) {
	st, ok := t.(sql.StringType)
	if !ok {
		return 0, false
	}
	c := st.Collation()
	if c == sql.Collation_binary || c == sql.Collation_Unspecified {
		return c, false
	}
	return c, true
}

// weightKey is the value of a string expression as its collation's
// weights, hex-encoded: two values get the same key iff they are equal
// under the collation. EXPLAIN shows it as WEIGHT_STRING(expr).
type weightKey struct {
	Child sql.Expression
	coll  sql.CollationID
}

var _ sql.Expression = (*weightKey)(nil)

func newWeightKey(e sql.Expression) sql.Expression {
	c, ok := hashedCollation(e.Type())
	if !ok {
		return e
	}
	return &weightKey{Child: e, coll: c}
}

func (k *weightKey) Resolved() bool             { return k.Child.Resolved() }
func (k *weightKey) String() string             { return fmt.Sprintf("WEIGHT_STRING(%s)", k.Child) }
func (k *weightKey) Type() sql.Type             { return types.LongText }
func (k *weightKey) IsNullable() bool           { return k.Child.IsNullable() }
func (k *weightKey) Children() []sql.Expression { return []sql.Expression{k.Child} }
func (k *weightKey) CollationCoercibility(*sql.Context) (sql.CollationID, byte) {
	return sql.Collation_binary, 5
}

func (k *weightKey) WithChildren(ch ...sql.Expression) (sql.Expression, error) {
	if len(ch) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(k, len(ch), 1)
	}
	return &weightKey{Child: ch[0], coll: k.coll}, nil
}

func (k *weightKey) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := k.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	w, err := appendWeights(ctx, nil, k.coll, k.Child.Type(), v)
	if err != nil {
		return nil, err
	}
	return hex.EncodeToString(w), nil
}

// appendWeights appends v's weights under coll to dst: 4 bytes per
// character, as sql.CollationID.WriteWeightString computes them, trailing
// spaces dropped under a PAD SPACE collation.
func appendWeights(ctx *sql.Context, dst []byte, coll sql.CollationID, t sql.Type, v any) ([]byte, error) {
	st, _ := t.(sql.StringType)
	s, err := types.ConvertToString(ctx, v, st, nil)
	if err != nil {
		return dst, err
	}
	w := weigherFor(coll)
	if w.padSpace {
		s = strings.TrimRight(s, " ")
	}
	return w.append(dst, s)
}

// weigher computes a collation's weights with the ASCII characters'
// weights in a table: go-mysql-server's weight of a character under the
// 0900 collations is a map lookup, a fifth of the CPU of a read-only
// sysbench run with DISTINCT over 120-character strings.
type weigher struct {
	sorter   sql.CollationSorter
	ascii    [utf8.RuneSelf]int32
	padSpace bool
}

var weighers sync.Map // sql.CollationID -> *weigher

func weigherFor(c sql.CollationID) *weigher {
	if w, ok := weighers.Load(c); ok {
		return w.(*weigher)
	}
	w := &weigher{sorter: c.Sorter(), padSpace: c.PadAttribute() == "PAD SPACE"}
	for r := range w.ascii {
		w.ascii[r] = w.sorter(rune(r))
	}
	actual, _ := weighers.LoadOrStore(c, w)
	return actual.(*weigher)
}

func (w *weigher) append(dst []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); {
		var wt int32
		if c := s[i]; c < utf8.RuneSelf {
			wt = w.ascii[c]
			i++
		} else {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n <= 1 {
				return dst, sql.ErrCollationMalformedString.New("hashing")
			}
			wt = w.sorter(r)
			i += n
		}
		dst = append(dst, byte(wt), byte(wt>>8), byte(wt>>16), byte(wt>>24))
	}
	return dst, nil
}

// collationHashRule wraps the string keys of hash joins and the string
// argument of COUNT(DISTINCT) in weightKey. (An UPDATE's target is marked
// by execOverride, which sees every UPDATE: single-table ones skip the
// post-analysis rules.)
func collationHashRule(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	n, sameJoins, err := transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		hl, ok := n.(*plan.HashLookup)
		if !ok {
			return n, transform.SameTree, nil
		}
		l, r, changed := weighKeys(hl.LeftProbeKey, hl.RightEntryKey)
		if !changed {
			return n, transform.SameTree, nil
		}
		out := *hl
		out.LeftProbeKey, out.RightEntryKey = l, r
		return &out, transform.NewTree, nil
	})
	if err != nil {
		return nil, transform.SameTree, err
	}
	n, sameCounts, err := transform.NodeExprs(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		cd, ok := e.(*aggregation.CountDistinct)
		if !ok || len(cd.Children()) != 1 {
			return e, transform.SameTree, nil
		}
		arg := cd.Children()[0]
		if _, done := arg.(*weightKey); done {
			return e, transform.SameTree, nil
		}
		wk := newWeightKey(arg)
		if wk == arg {
			return e, transform.SameTree, nil
		}
		out, err := cd.WithChildren(wk)
		if err != nil {
			return nil, transform.SameTree, err
		}
		// WithChildren builds a new aggregation: keep its column id.
		return out.(sql.IdExpression).WithId(cd.Id()).(sql.Expression), transform.NewTree, nil
	})
	return n, sameJoins && sameCounts, err
}

// weighKeys wraps the matching string parts of a hash join's probe and
// entry keys (single expressions or tuples) in weightKey. A part is wrapped
// on both sides or neither: when both are strings of one collation.
func weighKeys(l, r sql.Expression) (sql.Expression, sql.Expression, bool) {
	if _, ok := l.(*weightKey); ok {
		return l, r, false
	}
	lt, lok := l.(*expression.Tuple)
	rt, rok := r.(*expression.Tuple)
	if lok && rok {
		lc, rc := lt.Children(), rt.Children()
		if len(lc) != len(rc) {
			return l, r, false
		}
		nl, nr := append([]sql.Expression(nil), lc...), append([]sql.Expression(nil), rc...)
		changed := false
		for i := range lc {
			if a, b, ok := weighPair(lc[i], rc[i]); ok {
				nl[i], nr[i], changed = a, b, true
			}
		}
		if !changed {
			return l, r, false
		}
		return expression.NewTuple(nl...), expression.NewTuple(nr...), true
	}
	if lok || rok {
		return l, r, false
	}
	if a, b, ok := weighPair(l, r); ok {
		return a, b, true
	}
	return l, r, false
}

func weighPair(l, r sql.Expression) (sql.Expression, sql.Expression, bool) {
	lc, lok := hashedCollation(l.Type())
	rc, rok := hashedCollation(r.Type())
	if !lok || !rok || lc != rc {
		return l, r, false
	}
	return &weightKey{Child: l, coll: lc}, &weightKey{Child: r, coll: rc}, true
}

// weighedColumns returns, per column of sch, the collation its strings
// hash under (0: hash the value as go-mysql-server does), and whether any
// column needs weights.
func weighedColumns(sch sql.Schema) ([]sql.CollationID, bool) {
	colls := make([]sql.CollationID, len(sch))
	need := false
	for i, c := range sch {
		if coll, ok := hashedCollation(c.Type); ok {
			colls[i], need = coll, true
		}
	}
	return colls, need
}

// collationDistinctIter is DISTINCT over rows with collated strings: a row
// is dropped when an earlier one is equal to it column by column, strings
// compared under their collation. The first row of each set of equal rows
// is the one returned (MySQL returns one of them).
type collationDistinctIter struct {
	child sql.RowIter
	sch   sql.Schema
	colls []sql.CollationID
	seen  map[uint64]struct{}

	digest xxhash.Digest
	buf    []byte
}

func newCollationDistinctIter(child sql.RowIter, sch sql.Schema, colls []sql.CollationID) *collationDistinctIter {
	return &collationDistinctIter{child: child, sch: sch, colls: colls, seen: map[uint64]struct{}{}}
}

func (it *collationDistinctIter) Next(ctx *sql.Context) (sql.Row, error) {
	for {
		row, err := it.child.Next(ctx)
		if err != nil {
			return nil, err
		}
		h, err := it.hash(ctx, row)
		if err != nil {
			return nil, err
		}
		if _, dup := it.seen[h]; dup {
			continue
		}
		it.seen[h] = struct{}{}
		return row, nil
	}
}

func (it *collationDistinctIter) hash(ctx *sql.Context, row sql.Row) (uint64, error) {
	d := &it.digest
	d.Reset()
	for i, v := range row {
		if i > 0 {
			d.Write([]byte{0})
		}
		if i < len(it.colls) && it.colls[i] != 0 && v != nil {
			var err error
			// 1 first: a weighed value never hashes as a NULL's text.
			if it.buf, err = appendWeights(ctx, append(it.buf[:0], 1), it.colls[i], it.sch[i].Type, v); err != nil {
				return 0, err
			}
			d.Write(it.buf)
			continue
		}
		v, err := sql.UnwrapAny(ctx, v)
		if err != nil {
			return 0, err
		}
		fmt.Fprintf(d, "%v,", v)
	}
	return d.Sum64(), nil
}

func (it *collationDistinctIter) Close(ctx *sql.Context) error {
	it.seen = nil
	return it.child.Close(ctx)
}

// buildDistinct builds DISTINCT (plain or ordered) over child with
// collationDistinctIter when a column of child is a collated string; nil
// when go-mysql-server's own iterator is right.
func (o execOverride) buildDistinct(ctx *sql.Context, child sql.Node, row sql.Row) (sql.RowIter, error) {
	colls, need := weighedColumns(child.Schema())
	if !need || o.fe.exec == nil {
		return nil, nil
	}
	it, err := o.fe.exec.Build(ctx, child, row)
	if err != nil {
		return nil, err
	}
	return newCollationDistinctIter(it, child.Schema(), colls), nil
}

// buildUnionDistinct builds a UNION itself when go-mysql-server would get
// it wrong: UNION [DISTINCT] over collated strings (the union of all rows,
// then collationDistinctIter), and a UNION with ORDER BY and OFFSET, which
// go-mysql-server skips rows of before it sorts. The order is MySQL's:
// duplicates removed, then ORDER BY, then OFFSET, then LIMIT.
func (o execOverride) buildUnionDistinct(ctx *sql.Context, s *plan.SetOp, row sql.Row) (sql.RowIter, error) {
	if s.SetOpType != plan.UnionType || o.fe.exec == nil {
		return nil, nil
	}
	colls, need := weighedColumns(s.Schema())
	need = need && s.Distinct
	if !need && (s.Offset == nil || len(s.SortFields) == 0) {
		return nil, nil
	}
	all := *s
	all.Distinct, all.Limit, all.Offset, all.SortFields = false, nil, nil, nil
	iter, err := o.fe.exec.Build(ctx, &all, row)
	if err != nil {
		return nil, err
	}
	if s.Distinct {
		iter = newCollationDistinctIter(iter, s.Schema(), colls)
	}
	var offset, limit int64 = 0, -1
	if s.Offset != nil {
		if offset, err = iters.GetInt64Value(ctx, s.Offset); err != nil {
			iter.Close(ctx)
			return nil, err
		}
	}
	if s.Limit != nil {
		if limit, err = iters.GetInt64Value(ctx, s.Limit); err != nil {
			iter.Close(ctx)
			return nil, err
		}
	}
	switch {
	case len(s.SortFields) > 0 && limit >= 0:
		iter = iters.NewTopRowsIter(s.SortFields, limit+offset, false, iter, len(s.Schema()))
	case len(s.SortFields) > 0:
		iter = iters.NewSortIter(s.SortFields, iter)
	}
	if offset > 0 {
		iter = &skipIter{child: iter, skip: offset}
	}
	if limit >= 0 {
		iter = &iters.LimitIter{Limit: limit, ChildIter: iter}
	}
	return iter, nil
}

// skipIter drops the first skip rows of child (OFFSET).
type skipIter struct {
	child sql.RowIter
	skip  int64
}

func (it *skipIter) Next(ctx *sql.Context) (sql.Row, error) {
	for it.skip > 0 {
		if _, err := it.child.Next(ctx); err != nil {
			return nil, err
		}
		it.skip--
	}
	return it.child.Next(ctx)
}

func (it *skipIter) Close(ctx *sql.Context) error { return it.child.Close(ctx) }

// An UPDATE that changes only the case (or accents) of a string.
//
// go-mysql-server writes a row through UPDATE only if the new row differs
// from the old one under the table's column types, and under a
// case-insensitive collation 'two' and 'TWO' do not differ: UPDATE t SET
// v = 'TWO' matched the row and silently kept 'two'. MySQL compares the
// stored bytes and writes it. execOverride marks the table an UPDATE
// writes through (Table.exact): its Schema then gives each collated
// string column its character set's binary collation, so the comparison
// go-mysql-server makes is by bytes. Values are converted as before (same
// character set, same lengths); nothing else of the statement was planned
// with that schema. Multi-table UPDATE is left as it is.

// exactUpdate marks the target table of a single-table UPDATE.
func exactUpdate(u *plan.Update) (sql.Node, bool, error) {
	joined := false
	transform.Inspect(u.Child, func(n sql.Node) bool {
		if _, ok := n.(*plan.UpdateJoin); ok {
			joined = true
		}
		return !joined
	})
	if joined {
		return u, false, nil
	}
	exactRT := func(rt *plan.ResolvedTable) (*plan.ResolvedTable, bool, error) {
		nt, ok := exactTable(rt.Table)
		if !ok {
			return rt, false, nil
		}
		out, err := rt.WithTable(nt)
		if err != nil {
			return rt, false, err
		}
		return out.(*plan.ResolvedTable), true, nil
	}
	child, same, err := transform.Node(u.Child, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		switch x := n.(type) {
		case *plan.ResolvedTable:
			out, ok, err := exactRT(x)
			if !ok || err != nil {
				return n, transform.SameTree, err
			}
			return out, transform.NewTree, nil
		case *plan.IndexedTableAccess:
			rt, ok := x.TableNode.(*plan.ResolvedTable)
			if !ok {
				return n, transform.SameTree, nil
			}
			out, ok, err := exactRT(rt)
			if !ok || err != nil {
				return n, transform.SameTree, err
			}
			ita := *x
			ita.TableNode = out
			return &ita, transform.NewTree, nil
		}
		return n, transform.SameTree, nil
	})
	if err != nil || same == transform.SameTree {
		return u, false, err
	}
	out, err := u.WithChildren(child)
	return out, err == nil, err
}

// exactTable returns st marked exact (through go-mysql-server's process
// wrapper), or false if it is not a lockstep table with collated strings
// or is marked already.
func exactTable(st sql.Table) (sql.Table, bool) {
	switch x := st.(type) {
	case *Table:
		if x.exact || !x.meta.hasCollatedStrings() {
			return st, false
		}
		et := *x
		et.exact = true
		return &et, true
	case *indexedTable: // an index lookup's target
		inner, ok := exactTable(x.Table)
		if !ok {
			return st, false
		}
		return &indexedTable{Table: inner.(*Table)}, true
	case *plan.ProcessTable:
		inner, ok := exactTable(x.Table)
		if !ok {
			return st, false
		}
		pt := *x
		pt.Table = inner
		return &pt, true
	}
	return st, false
}

// hasCollatedStrings reports whether a column is a string with a
// non-binary collation.
func (m *tableMeta) hasCollatedStrings() bool {
	for _, c := range m.schema.Schema {
		if _, ok := hashedCollation(c.Type); ok {
			return true
		}
	}
	return false
}

// exactSchema is the table's schema with every collated string column in
// its character set's binary collation (utf8mb4: utf8mb4_0900_bin, which
// is NO PAD like the 0900 collations).
func (m *tableMeta) exactSchema() sql.Schema {
	out := make(sql.Schema, len(m.schema.Schema))
	for i, c := range m.schema.Schema {
		out[i] = c
		coll, ok := hashedCollation(c.Type)
		if !ok {
			continue
		}
		st, ok := c.Type.(sql.TypeWithCollation)
		if !ok {
			continue
		}
		bin := coll.CharacterSet().BinaryCollation()
		if coll.CharacterSet() == sql.CharacterSet_utf8mb4 {
			bin = sql.Collation_utf8mb4_0900_bin
		}
		if bin == coll {
			continue
		}
		nt, err := st.WithNewCollation(bin)
		if err != nil {
			continue
		}
		cc := *c
		cc.Type = nt
		out[i] = &cc
	}
	return out
}
