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
	if f, ok := n.(*plan.Filter); ok {
		a.filter, n = f, f.Child
	}
	if ta, ok := n.(*plan.TableAlias); ok {
		a.alias, n = ta, ta.Child
	}
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
	var err error
	if a.alias != nil {
		if access, err = a.alias.WithChildren(access); err != nil {
			return nil, err
		}
	}
	if a.filter != nil {
		return a.filter.WithChildren(access)
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
