package server

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
)

// KILL [QUERY | CONNECTION] id, as MySQL answers it:
//   - the id may be any expression, evaluated to an integer ('28' is 28,
//     'abc' is 0): go-mysql-server's parser takes a number only (1064), and
//     DBD::mysql sends pt-kill's `KILL QUERY ?` with the id quoted;
//   - an id no connection has is 1094 "Unknown thread id: N"
//     (go-mysql-server answered OK, so a tool could not tell it missed).
// The kill itself is go-mysql-server's.

var reKill = regexp.MustCompile(`(?is)^\s*kill\s+(?:(query|connection)\s+)?(.+?)\s*;?\s*$`)

// mayBeKill is a cheap filter: the statement's first word is KILL.
func mayBeKill(q string) bool {
	q = strings.TrimLeft(q, " \t\r\n")
	return len(q) > 5 && strings.EqualFold(q[:4], "kill") && (q[4] == ' ' || q[4] == '\t' || q[4] == '\n' || q[4] == '\r')
}

// kill answers a KILL statement; sent is false when query is not one it
// can read (go-mysql-server then answers it).
func (h *handler) kill(ctx context.Context, c *mysql.Conn, query string, cb mysql.ResultSpoolFn) (sent bool, err error) {
	m := reKill.FindStringSubmatch(query)
	if m == nil {
		return false, nil
	}
	id, err := strconv.ParseUint(m[2], 10, 32)
	if err != nil {
		var v string
		qerr := h.inner(ctx, c, "SELECT CAST(("+m[2]+") AS UNSIGNED)", func(r *sqltypes.Result) {
			if len(r.Rows) == 1 && len(r.Rows[0]) == 1 {
				v = r.Rows[0][0].ToString()
			}
		})
		if qerr != nil {
			return false, nil // not an expression: go-mysql-server's error stands
		}
		if id, err = strconv.ParseUint(v, 10, 64); err != nil || id > 1<<32-1 {
			return true, mysql.NewSQLError(1094, "HY000", "Unknown thread id: %s", v)
		}
	}
	found := false
	for _, p := range h.fe.Engine.ProcessList.Processes() {
		if uint64(p.Connection) == id {
			found = true
			break
		}
	}
	if !found {
		return true, mysql.NewSQLError(1094, "HY000", "Unknown thread id: %d", id)
	}
	stmt := "KILL "
	if m[1] != "" {
		stmt += strings.ToUpper(m[1]) + " "
	}
	if err := h.inner(ctx, c, stmt+strconv.FormatUint(id, 10), nil); err != nil {
		return true, err
	}
	// Allowed: the statement the fast path runs, which go-mysql-server's
	// process list does not know, stops too.
	if h.fe.StopFastStatement(uint32(id)) {
		h.killParsingPrepare(uint32(id), m[1] == "" || strings.EqualFold(m[1], "connection"))
	}
	return true, cb(&sqltypes.Result{}, false)
}

// prepareParseKills counts the prepares KILL answered during vitess's
// parse (SHOW GLOBAL STATUS Lockstep_prepare_parse_kills).
var prepareParseKills atomic.Int64

// killParsingPrepare answers the COM_STMT_PREPARE of connection id that
// KILL QUERY or KILL (connection) found in vitess's parse with 1317 now,
// not when that parse ends (3.8 s at 64 MiB): vitess's own answer is
// dropped when it comes (wireConn.interject). A connection KILL closed
// leaves the process list now too; its session is closed when the parse
// has ended and the protocol layer lets go of the connection.
func (h *handler) killParsingPrepare(id uint32, connection bool) {
	v, ok := h.parsing.Load(id)
	if !ok {
		return
	}
	wc := v.(*wireConn)
	if wc.interject(errInterrupted().(*mysql.SQLError), func() bool { return h.fe.ClaimKilledPrepare(id) }) {
		prepareParseKills.Add(1)
		if connection {
			h.fe.Engine.ProcessList.RemoveConnection(id)
		}
	}
}
