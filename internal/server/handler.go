package server

import (
	"context"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// handler wraps go-mysql-server's protocol handler. Today it only gives
// errors MySQL's exact wording where go-mysql-server prefixes its own; it
// is also the seam where a statement fast path will sit.
type handler struct {
	mysql.Handler
}

func wrapHandler(h mysql.Handler) (mysql.Handler, error) { return &handler{Handler: h}, nil }

func (h *handler) ComQuery(ctx context.Context, c *mysql.Conn, query string, cb mysql.ResultSpoolFn) error {
	return mysqlError(query, h.Handler.ComQuery(ctx, c, query, cb))
}

func (h *handler) ComMultiQuery(ctx context.Context, c *mysql.Conn, query string, cb mysql.ResultSpoolFn) (string, error) {
	rest, err := h.Handler.ComMultiQuery(ctx, c, query, cb)
	return rest, mysqlError(query, err)
}

func (h *handler) ComStmtExecute(ctx context.Context, c *mysql.Conn, p *mysql.PrepareData, cb func(*sqltypes.Result) error) error {
	return mysqlError(p.PrepareStmt, h.Handler.ComStmtExecute(ctx, c, p, cb))
}

func (h *handler) ComPrepare(ctx context.Context, c *mysql.Conn, query string, p *mysql.PrepareData) ([]*querypb.Field, error) {
	f, err := h.Handler.ComPrepare(ctx, c, query, p)
	return f, mysqlError(query, err)
}
