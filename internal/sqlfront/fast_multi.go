package sqlfront

import (
	"bytes"
	"context"
	"slices"

	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Multi-point reads: SELECT cols FROM t WHERE pk IN (?, ?, ...) and, for a
// composite key, WHERE (pk1, pk2, ...) IN ((?, ?), (?, ?), ...) naming every
// key column once, optionally FOR UPDATE / LOCK IN SHARE MODE (TPC-C's item
// and stock reads). The keys are read one by one in key order, each row
// once, as go-mysql-server reads the point ranges it makes of the list
// (rowin.go turns a row list into ORs of key equalities for it). A NULL or
// an out-of-range value matches nothing; a value of another kind falls
// back, as for point reads.

// maxMultiPoint bounds the list a plan takes (longer lists: go-mysql-server).
const maxMultiPoint = 1000

// recogniseMultiPoint fills p.multi from an IN over the whole primary key;
// false when where has another shape. With prefixOK the list may name only
// the key's leading columns (p.multiPrefix: each item is a key range).
func recogniseMultiPoint(where ast.Expr, p *fastPlan, qualifierOK func(ast.TableName) bool, prefixOK bool) bool {
	m := p.meta
	in, ok := where.(*ast.ComparisonExpr)
	if !ok || in.Operator != ast.InStr || in.Escape != nil {
		return false
	}
	// The key columns the list names, in the list's order.
	var lhs []*ast.ColName
	switch l := in.Left.(type) {
	case *ast.ColName:
		lhs = []*ast.ColName{l}
	case ast.ValTuple:
		for _, e := range l {
			c, ok := e.(*ast.ColName)
			if !ok {
				return false
			}
			lhs = append(lhs, c)
		}
	default:
		return false
	}
	if len(lhs) > len(m.pk.cols) || (len(lhs) < len(m.pk.cols) && !prefixOK) {
		return false
	}
	pos := make([]int, len(lhs)) // list position -> key column position
	seen := make([]bool, len(lhs))
	for i, c := range lhs {
		if !qualifierOK(c.Qualifier) {
			return false
		}
		ord := m.colIndex(c.Name.String())
		k := -1
		for j, kc := range m.pk.cols[:len(lhs)] {
			if kc.ord == ord {
				k = j
			}
		}
		if k < 0 || seen[k] || m.pk.cols[k].prefix != 0 || !fastKeyType(m.pk.cols[k].typ) {
			return false
		}
		seen[k], pos[i] = true, k
	}
	list, ok := in.Right.(ast.ValTuple)
	if !ok || len(list) == 0 || len(list) > maxMultiPoint {
		return false
	}
	for _, e := range list {
		var vals []ast.Expr
		if len(lhs) == 1 {
			vals = []ast.Expr{e}
		} else {
			t, ok := e.(ast.ValTuple)
			if !ok || len(t) != len(lhs) {
				return false
			}
			vals = t
		}
		key := make([]string, len(lhs))
		for i, v := range vals {
			name, ok := paramName(v)
			if !ok {
				return false
			}
			key[pos[i]] = name
		}
		p.multi = append(p.multi, key)
	}
	p.multiPrefix = len(lhs) < len(m.pk.cols)
	return true
}

// multiKeys returns the keys (or, for p.multiPrefix, key prefixes) the
// bound list names, sorted and without duplicates, NULL and out-of-range
// items dropped; ok is false when a value is not one the fast path binds.
func (p *fastPlan) multiKeys(bind map[string]*querypb.BindVariable) (keys [][]byte, ok bool) {
	keys = make([][]byte, 0, len(p.multi))
	for _, names := range p.multi {
		key, none, ok := p.boundKeyOf(nil, names, bind, true)
		if !ok {
			return nil, false
		}
		if !none {
			keys = append(keys, key)
		}
	}
	slices.SortFunc(keys, bytes.Compare)
	return slices.CompactFunc(keys, bytes.Equal), true
}

// runMultiPoint executes a multi-point read plan.
func (s *Session) runMultiPoint(ctx context.Context, p *fastPlan, entry *tableEntry, bind map[string]*querypb.BindVariable, explicit bool) (*sqltypes.Result, bool, error) {
	keys, ok := p.multiKeys(bind)
	if !ok {
		return nil, false, nil
	}
	return s.readKeys(ctx, p, entry, keys, explicit)
}
