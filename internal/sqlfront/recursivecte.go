package sqlfront

import (
	"errors"
	"io"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/iters"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/vitess/go/mysql"
)

// Recursive CTEs under cte_max_recursion_depth.
//
// go-mysql-server's recursive CTE iterator stops after a fixed 10,001
// iterations with its own 1105 "WITH RECURSIVE iteration limit exceeded",
// whatever @@cte_max_recursion_depth says (MySQL's default is 1000; a
// query that needs more cannot get it), and never looks at the statement's
// context: a recursion whose rows are consumed inside the statement (an
// aggregate over it) ran on after KILL QUERY. lockstep builds the
// iterator itself (the executor override), as go-mysql-server's but:
// iteration k (the anchor is iteration 0) runs only when k <=
// @@cte_max_recursion_depth, else the statement fails with MySQL's 3636
// "Recursive query aborted after k iterations. Try increasing
// @@cte_max_recursion_depth to a larger value."; and the context is
// checked at every iteration and every 1024 rows.

// errCTEDepth is ER_CTE_MAX_RECURSION_DEPTH for iteration k.
func errCTEDepth(k uint64) error {
	return mysql.NewSQLError(3636, "HY000", "Recursive query aborted after %d iterations. Try increasing @@cte_max_recursion_depth to a larger value.", k)
}

// buildRecursiveCte is go-mysql-server's buildRecursiveCte with lockstep's
// iterator.
func (o execOverride) buildRecursiveCte(ctx *sql.Context, n *plan.RecursiveCte, row sql.Row) (sql.RowIter, error) {
	depth := uint64(1000)
	if v, err := ctx.GetSessionVariable(ctx, "cte_max_recursion_depth"); err == nil {
		if d, ok := sessionInt(v); ok && d >= 0 {
			depth = uint64(d)
		}
	}
	var iter sql.RowIter = &recursiveCteIter{
		init:        n.Left(),
		rec:         n.Right(),
		row:         row,
		working:     n.Working,
		deduplicate: n.Union().Distinct,
		build:       o.fe.exec.Build,
		depth:       depth,
	}
	u := n.Union()
	switch {
	case u.Limit != nil && len(u.SortFields) > 0:
		limit, err := iters.GetInt64Value(ctx, u.Limit)
		if err != nil {
			return nil, err
		}
		iter = iters.NewTopRowsIter(u.SortFields, limit, false, iter, len(u.Schema()))
	case u.Limit != nil:
		limit, err := iters.GetInt64Value(ctx, u.Limit)
		if err != nil {
			return nil, err
		}
		iter = &iters.LimitIter{Limit: limit, ChildIter: iter}
	case len(u.SortFields) > 0:
		iter = iters.NewSortIter(u.SortFields, iter)
	}
	return iter, nil
}

// recursiveCteIter runs the anchor [init], then the recursive part [rec]
// over the rows the previous iteration produced (handed to it through the
// [working] table) until an iteration produces none.
type recursiveCteIter struct {
	init, rec   sql.Node
	row         sql.Row
	working     *plan.RecursiveTable
	deduplicate bool // UNION (not UNION ALL)
	build       func(*sql.Context, sql.Node, sql.Row) (sql.RowIter, error)
	depth       uint64 // @@cte_max_recursion_depth

	iter  sql.RowIter // the running iteration's
	cycle uint64      // iterations started after the anchor
	rows  int         // rows read, for the context check
	temp  []sql.Row   // this iteration's rows, the next one's input
	seen  sql.KeyValueCache
}

func (r *recursiveCteIter) Next(ctx *sql.Context) (sql.Row, error) {
	if r.iter == nil {
		if err := interrupted(ctx); err != nil {
			return nil, err
		}
		if r.deduplicate {
			r.seen = sql.NewMapCache()
		}
		var err error
		if r.iter, err = r.build(ctx, r.init, r.row); err != nil {
			return nil, err
		}
	}
	for {
		r.rows++
		if r.rows&1023 == 0 {
			if err := interrupted(ctx); err != nil {
				return nil, err
			}
		}
		row, err := r.iter.Next(ctx)
		if errors.Is(err, io.EOF) && len(r.temp) > 0 {
			if err := r.nextIteration(ctx); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		if r.deduplicate {
			key, _ := sql.HashOf(ctx, row)
			if v, _ := r.seen.Get(key); v != nil {
				continue
			}
			r.seen.Put(key, struct{}{})
		}
		r.temp = append(r.temp, row)
		return row, nil
	}
}

// nextIteration starts the recursive part over the rows the last
// iteration produced.
func (r *recursiveCteIter) nextIteration(ctx *sql.Context) error {
	if err := interrupted(ctx); err != nil {
		return err
	}
	r.cycle++
	if r.cycle > r.depth {
		return errCTEDepth(r.cycle)
	}
	if r.working != nil {
		r.working.Buf = r.temp
		r.temp = nil
	}
	if err := r.iter.Close(ctx); err != nil {
		return err
	}
	var err error
	r.iter, err = r.build(ctx, r.rec, r.row)
	return err
}

func (r *recursiveCteIter) Close(ctx *sql.Context) error {
	if r.working != nil {
		r.working.Buf = nil
	}
	r.temp = nil
	if r.iter != nil {
		return r.iter.Close(ctx)
	}
	return nil
}
