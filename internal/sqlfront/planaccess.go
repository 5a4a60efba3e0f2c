package sqlfront

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
)

// indexAccess is what lockstep's planner rules (sortrule.go, indexrule.go,
// joinrule.go) work on: an optional Filter over an optional TableAlias over
// a static index access of a lockstep index whose lookup is one range.
type indexAccess struct {
	filter *plan.Filter     // nil when the access is not filtered
	alias  *plan.TableAlias // nil when the table has no alias
	ita    *plan.IndexedTableAccess
	lookup sql.IndexLookup
	ix     *index
	rng    sql.MySQLRange // the one range
	name   string         // the name column references use: the alias or the table
}

// staticAccess returns n as an indexAccess, or false when it has another
// shape.
func staticAccess(ctx *sql.Context, n sql.Node) (*indexAccess, bool) {
	a := &indexAccess{}
	a.filter, a.alias, n = peelAccess(n)
	ita, ok := n.(*plan.IndexedTableAccess)
	if !ok || !ita.IsStatic() {
		return nil, false
	}
	lookup, err := ita.GetLookup(ctx, nil)
	if err != nil {
		return nil, false
	}
	ix, ok := lookup.Index.(*index)
	if !ok {
		return nil, false
	}
	ranges, ok := lookup.Ranges.(sql.MySQLRangeCollection)
	if !ok || len(ranges) != 1 {
		return nil, false
	}
	a.ita, a.lookup, a.ix, a.rng, a.name = ita, lookup, ix, ranges[0], ita.Name()
	if a.alias != nil {
		a.name = a.alias.Name()
	}
	return a, true
}

// peelAccess splits a table access into its optional filter and alias
// and what lies under them.
func peelAccess(n sql.Node) (*plan.Filter, *plan.TableAlias, sql.Node) {
	var f *plan.Filter
	var ta *plan.TableAlias
	if x, ok := n.(*plan.Filter); ok {
		f, n = x, x.Child
	}
	if x, ok := n.(*plan.TableAlias); ok {
		ta, n = x, x.Child
	}
	return f, ta, n
}

// withStatic returns the node with the access replaced by a static one
// over lookup.
func (a *indexAccess) withStatic(ctx *sql.Context, lookup sql.IndexLookup) (sql.Node, error) {
	nita, err := plan.NewStaticIndexedAccessForTableNode(ctx, a.ita.TableNode, lookup)
	if err != nil {
		return nil, err
	}
	return a.with(nita)
}

// with returns the node with the access replaced by access, under the same
// alias and filter.
func (a *indexAccess) with(access sql.Node) (sql.Node, error) {
	return rewrap(a.alias, a.filter, access)
}

// rewrap puts access under alias and then filter, either of them nil when
// absent: a table access replaced where the old one stood.
func rewrap(alias *plan.TableAlias, filter *plan.Filter, access sql.Node) (sql.Node, error) {
	var err error
	if alias != nil {
		if access, err = alias.WithChildren(access); err != nil {
			return nil, err
		}
	}
	if filter != nil {
		return filter.WithChildren(access)
	}
	return access, nil
}

// fixedPrefix returns how many leading columns of a range hold one value
// (a closed range from a value to itself, or IS NULL).
func fixedPrefix(ctx *sql.Context, r sql.MySQLRange) int {
	k := 0
	for _, ce := range r {
		switch ce.Type() {
		case sql.RangeType_EqualNull:
		case sql.RangeType_ClosedClosed:
			lo, hi := sql.GetMySQLRangeCutKey(ce.LowerBound), sql.GetMySQLRangeCutKey(ce.UpperBound)
			if c, err := ce.Typ.Compare(ctx, lo, hi); err != nil || c != 0 {
				return k
			}
		default:
			return k
		}
		k++
	}
	return k
}
