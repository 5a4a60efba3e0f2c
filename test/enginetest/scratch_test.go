package enginetest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"

	"lockstep/internal/sqlfront"
)

func runSQL(t *testing.T, fe *sqlfront.Frontend, ctx *sql.Context, q string) {
	ctx = ctx.WithQuery(q)
	_, iter, _, err := fe.Engine.Query(ctx, q)
	if err != nil {
		fmt.Printf("%s\n  ERR %v\n", q, err)
		return
	}
	rows, err := sql.RowIterToRows(ctx, iter)
	if err != nil {
		fmt.Printf("%s\n  ERR %v\n", q, err)
		return
	}
	fmt.Printf("%s\n  %v\n", q, rows)
}

func TestScratch(t *testing.T) {
	f := os.Getenv("SCRATCH")
	if f == "" {
		t.Skip()
	}
	b, _ := os.ReadFile(f)
	fe := mustFrontend()
	ctx := sql.NewContext(context.Background(), sql.WithSession(newSession(fe)))
	for _, q := range strings.Split(string(b), ";\n") {
		if strings.TrimSpace(q) != "" {
			runSQL(t, fe, ctx, strings.TrimSpace(q))
		}
	}
}
