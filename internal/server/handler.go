package server

import (
	"context"
	"errors"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
)

// handler wraps go-mysql-server's protocol handler. Today it only gives
// errors MySQL's exact wording where go-mysql-server prefixes its own; it
// is also the seam where a statement fast path will sit.
type handler struct {
	mysql.Handler
}

func wrapHandler(h mysql.Handler) (mysql.Handler, error) { return &handler{Handler: h}, nil }

func (h *handler) ComQuery(ctx context.Context, c *mysql.Conn, query string, cb mysql.ResultSpoolFn) error {
	return mysqlError(h.Handler.ComQuery(ctx, c, query, cb))
}

func (h *handler) ComMultiQuery(ctx context.Context, c *mysql.Conn, query string, cb mysql.ResultSpoolFn) (string, error) {
	rest, err := h.Handler.ComMultiQuery(ctx, c, query, cb)
	return rest, mysqlError(err)
}

func (h *handler) ComStmtExecute(ctx context.Context, c *mysql.Conn, p *mysql.PrepareData, cb func(*sqltypes.Result) error) error {
	return mysqlError(h.Handler.ComStmtExecute(ctx, c, p, cb))
}

// gmsPrefixes are go-mysql-server's wordings in front of a MySQL message.
var gmsPrefixes = []string{"duplicate primary key given: ", "duplicate unique key given: "}

func mysqlError(err error) error {
	var se *mysql.SQLError
	if err == nil || !errors.As(err, &se) {
		return err
	}
	if se.Num == mysql.ERDupEntry {
		msg := se.Message
		for _, p := range gmsPrefixes {
			msg = strings.TrimPrefix(msg, p)
		}
		return mysql.NewSQLError(se.Num, mysql.SSDupKey, "%s", msg)
	}
	return err
}
