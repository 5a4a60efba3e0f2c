package server

import (
	"errors"

	"github.com/dolthub/vitess/go/mysql"

	"lockstep/internal/sqlfront"
)

// timedOut gives a statement that max_execution_time stopped MySQL's 3024
// "Query execution was interrupted, maximum statement execution time
// exceeded": its context was cancelled as KILL QUERY cancels it, so its
// error maps to 1317 (sqlfront/interrupt.go arms the timer).
func (h *handler) timedOut(c *mysql.Conn, err error) error {
	var se *mysql.SQLError
	if errors.As(err, &se) && se.Num == mysql.ERQueryInterrupted && h.fe.StatementTimedOut(c.ConnectionID) {
		return sqlfront.ErrQueryTimeout()
	}
	return err
}
