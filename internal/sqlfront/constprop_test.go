package sqlfront

import (
	"sort"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// TestImpliedConstants: which `column = constant` conjuncts constPropRule
// derives from a WHERE condition (and inner joins' ON conjuncts).
func TestImpliedConstants(t *testing.T) {
	col := func(table, name string, typ sql.Type) *expression.GetField {
		return expression.NewGetFieldWithTable(0, 0, typ, "db", table, name, true)
	}
	dw := col("d", "d_w_id", types.Int16)
	w := col("w", "w_id", types.Int16)
	ow := col("o", "o_w_id", types.Uint32)
	k := col("s", "k", types.LongText)
	c := col("o", "c", types.LongText)
	one := expression.NewLiteral(int8(1), types.Int8)
	two := expression.NewLiteral(int8(2), types.Int8)
	str := expression.NewLiteral("1", types.LongText)
	null := expression.NewLiteral(nil, types.Null)
	eq := func(a, b sql.Expression) sql.Expression { return expression.NewEquals(a, b) }
	for _, tc := range []struct {
		name      string
		where, on []sql.Expression
		want      []string
	}{
		{"through a join equality", []sql.Expression{eq(dw, w), eq(w, one)}, nil, []string{"(d.d_w_id = 1)"}},
		{"constant on the left", []sql.Expression{eq(dw, w), eq(one, w)}, nil, []string{"(d.d_w_id = 1)"}},
		{"a chain", []sql.Expression{eq(ow, dw), eq(dw, w), eq(w, one)}, nil, []string{"(d.d_w_id = 1)", "(o.o_w_id = 1)"}},
		{"an inner join's ON equality", []sql.Expression{eq(w, one)}, []sql.Expression{eq(dw, w)}, []string{"(d.d_w_id = 1)"}},
		{"a constant only in ON is not carried", []sql.Expression{eq(dw, w)}, []sql.Expression{eq(w, one)}, nil},
		{"both stated", []sql.Expression{eq(dw, w), eq(w, one), eq(dw, two)}, nil, nil},
		{"strings are not carried", []sql.Expression{eq(c, k), eq(k, str)}, nil, nil},
		{"a string constant is not carried", []sql.Expression{eq(dw, w), eq(w, str)}, nil, nil},
		{"NULL is not carried", []sql.Expression{eq(dw, w), eq(w, null)}, nil, nil},
		{"no column equality", []sql.Expression{eq(w, one)}, nil, nil},
		{"OR is not a conjunct", []sql.Expression{expression.NewOr(eq(dw, w), eq(w, one))}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range impliedConstants(tc.where, tc.on) {
				got = append(got, e.String())
			}
			sort.Strings(got)
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %q, want %q", got, tc.want)
				}
			}
		})
	}
}
