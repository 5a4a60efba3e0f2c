package server

import (
	"context"
	"strings"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
)

// SHUTDOWN and COM_SHUTDOWN (`mysqladmin shutdown`), as MySQL 8: an
// account with the SHUTDOWN privilege stops the server cleanly (OK first,
// then the same shutdown as SIGTERM); any other gets 1227. The protocol
// layer knows neither: the statement is answered here, and wireConn turns
// the command into the statement (wireconn.go).

const comShutdown = 0x08

// shutdownQuery is the statement COM_SHUTDOWN becomes.
const shutdownQuery = "SHUTDOWN"

// isShutdown reports whether query is the SHUTDOWN statement.
func isShutdown(q string) bool {
	q = strings.TrimRight(strings.TrimSpace(q), "; \t\r\n")
	return strings.EqualFold(q, shutdownQuery)
}

// stopper is the server's "shut down now" signal, closed once.
type stopper struct {
	once sync.Once
	c    chan struct{}
}

func newStopper() *stopper { return &stopper{c: make(chan struct{})} }

func (s *stopper) stop() { s.once.Do(func() { close(s.c) }) }

// shutdown answers SHUTDOWN on connection c.
func (h *handler) shutdown(ctx context.Context, c *mysql.Conn, cb mysql.ResultSpoolFn) error {
	// A connection's session is made by its first statement; COM_SHUTDOWN
	// may be the first.
	if err := h.inner(ctx, c, "SELECT 1", nil); err != nil {
		return err
	}
	if err := h.fe.RequirePrivilege(c.ConnectionID, sql.PrivilegeType_Shutdown, "SHUTDOWN"); err != nil {
		return err
	}
	if h.stop == nil {
		return mysql.NewSQLError(mysql.ERNotSupportedYet, "42000", "This server cannot be shut down from a client")
	}
	err := cb(&sqltypes.Result{}, false)
	h.stop.stop()
	return err
}
