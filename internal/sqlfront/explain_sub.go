package sqlfront

import (
	"sort"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Subqueries in EXPLAIN. MySQL numbers every SELECT of a statement in the
// order its text has them (the outer one is 1; a select list's subqueries
// come before the FROM's derived tables, those before WHERE's subqueries)
// and gives each its own rows: DERIVED for a derived table, SUBQUERY for a
// subquery in an expression, DEPENDENT SUBQUERY for one that reads the
// outer row; the outer SELECT is then PRIMARY rather than SIMPLE.
//
// The analysed plan has lost the text's order (joins are reordered), so
// selectNumbers parses the statement again and numbers its SELECTs; the
// plan's subqueries and derived tables carry their SELECT's text as
// go-mysql-server's parser printed it (plan.Subquery.QueryString,
// plan.SubqueryAlias.TextDefinition), which finds the number. A SELECT
// the text does not name (a CTE, a view, one the parser rewrote) takes the
// next number after the text's.
//
// A subquery in the select list that WHERE or HAVING also uses by its
// alias appears twice in the plan (go-mysql-server evaluates the list
// below the filter and again above it): one SELECT has one set of rows,
// so the second is skipped — same enclosing SELECT, same text, same alias.

// selectNumbers numbers the SELECTs of the statement query (an EXPLAIN):
// text -> their numbers in order (one text can occur more than once), and
// how many there are. It returns nil and 1 when the text does not parse.
func selectNumbers(query string) (map[string][]int, int) {
	stmt, err := ast.Parse(query)
	if err != nil {
		return nil, 1
	}
	if e, ok := stmt.(*ast.Explain); ok {
		stmt = e.Statement
	}
	out := map[string][]int{}
	n := 0
	var pending []string // subqueries whose first SELECT comes next
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		switch x := node.(type) {
		case *ast.Subquery:
			pending = append(pending, ast.String(x.Select))
		case *ast.Select:
			n++
			for _, text := range pending {
				out[text] = append(out[text], n)
			}
			pending = pending[:0]
		}
		return true, nil
	}, stmt)
	return out, max(n, 1)
}

// subKey identifies one subquery's rows: its enclosing SELECT, its text
// and the alias it is selected under.
type subKey struct {
	scope       int
	text, alias string
}

// selectID returns the number of the SELECT whose text is text, inside
// SELECT scope under alias; first is false when that SELECT was already
// shown.
func (w *explainWalk) selectID(text string, scope int, alias string) (id int, first bool) {
	k := subKey{scope, text, alias}
	if id, ok := w.shown[k]; ok {
		return id, false
	}
	if ids := w.numbers[text]; text != "" && w.used[text] < len(ids) {
		id = ids[w.used[text]]
		w.used[text]++
	} else {
		w.last++
		id = w.last
	}
	w.shown[k] = id
	return id, true
}

// subqueries adds the rows of the subqueries in n's own expressions (not
// its children's), n being part of SELECT scope.
func (w *explainWalk) subqueries(n sql.Node, scope int) {
	ex, ok := n.(sql.Expressioner)
	if !ok {
		return
	}
	var visit func(e sql.Expression, alias string)
	visit = func(e sql.Expression, alias string) {
		switch x := e.(type) {
		case *expression.Alias:
			visit(x.Child, x.Name())
			return
		case *plan.Subquery:
			id, first := w.selectID(x.QueryString, scope, alias)
			if !first || x.Query == nil {
				return
			}
			kind := "SUBQUERY"
			if !x.Correlated().Empty() {
				kind = "DEPENDENT SUBQUERY"
			}
			w.walk(x.Query, id, kind, false, false, "")
			return
		}
		for _, c := range e.Children() {
			visit(c, "")
		}
	}
	for _, e := range ex.Expressions() {
		if e != nil {
			visit(e, "")
		}
	}
}

// reads reports whether SELECT id has a row.
func (w *explainWalk) reads(id int) bool {
	for _, r := range w.rows {
		if r.id == id {
			return true
		}
	}
	return false
}

// finish orders the rows by SELECT (MySQL's order: a SELECT's rows, in
// join order, before the next SELECT's) and names the outer SELECT
// PRIMARY when there are others.
func (w *explainWalk) finish() {
	sort.SliceStable(w.rows, func(i, j int) bool { return w.rows[i].id < w.rows[j].id })
	nested := false
	for _, r := range w.rows {
		if r.id != 1 {
			nested = true
		}
	}
	if !nested {
		return
	}
	for i := range w.rows {
		if w.rows[i].id == 1 && w.rows[i].selectType == "SIMPLE" {
			w.rows[i].selectType = "PRIMARY"
		}
	}
}
