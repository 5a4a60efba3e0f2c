package server

import (
	"sync"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"lockstep/internal/sqlfront"
)

// SHOW PROCESSLIST's User column.
//
// go-mysql-server enters a connection in its process list as
// "unauthenticated user" when it is accepted and names the account only
// when a database is chosen (the handshake's database, or USE): a client
// that connected without one stayed "unauthenticated user" for its whole
// life (`mysqladmin processlist` showed root so). MySQL shows the account
// from the end of the handshake, a connection between commands being in
// Command "Sleep". processList keeps the account each login authenticated
// (the auth methods report it, auth.go) and fills it in.

const unauthenticatedUser = "unauthenticated user" // go-mysql-server's placeholder

type processList struct {
	sql.ProcessList
	users sync.Map // connection id → user name, from its login on
	// preparing: connection id → *preparing, its COM_STMT_PREPARE while
	// go-mysql-server prepares it (an operation, not a query, there).
	preparing sync.Map
}

// preparing is a COM_STMT_PREPARE in the process list: MySQL shows
// Command "Prepare" and the statement's text; go-mysql-server showed the
// connection in Sleep.
type preparing struct {
	ctx   *sql.Context
	query string
	start time.Time
}

// loggedIn records the account connection c logged in as.
func (p *processList) loggedIn(c *mysql.Conn, user string) {
	p.users.Store(c.ConnectionID, user)
}

func (p *processList) Processes() []sql.Process {
	ps := p.ProcessList.Processes() // copies
	for i := range ps {
		if v, ok := p.preparing.Load(ps[i].Connection); ok {
			pr := v.(*preparing)
			ps[i].Command, ps[i].Query, ps[i].StartedAt = sql.ProcessCommand("Prepare"), pr.query, pr.start
		}
		if ps[i].User != unauthenticatedUser {
			continue
		}
		if u, ok := p.users.Load(ps[i].Connection); ok {
			ps[i].User = u.(string)
			if ps[i].Command == sql.ProcessCommandConnect {
				ps[i].Command = sql.ProcessCommandSleep
			}
		}
	}
	return ps
}

func (p *processList) RemoveConnection(connID uint32) {
	p.users.Delete(connID)
	p.preparing.Delete(connID)
	p.ProcessList.RemoveConnection(connID)
}

// BeginQuery and BeginOperation hand the statement's context to a long
// statement's planning state (sqlfront/planning.go, longstmt.go); the
// operation is a COM_STMT_PREPARE's.
func (p *processList) BeginQuery(ctx *sql.Context, query string) (*sql.Context, error) {
	qctx, err := p.ProcessList.BeginQuery(ctx, query)
	if err == nil && len(query) >= sqlfront.MinStoppableText {
		sqlfront.StartPlanning(qctx)
	}
	return qctx, err
}

func (p *processList) BeginOperation(ctx *sql.Context) (*sql.Context, error) {
	octx, err := p.ProcessList.BeginOperation(ctx)
	if err == nil {
		sqlfront.StartPlanning(octx)
		if q := octx.Query(); q != "" && !octx.IsInterpreted() { // a prepare's (ComPrepare, ComBind)
			p.preparing.Store(octx.Session.ID(), &preparing{ctx: octx, query: q, start: time.Now()})
		}
	}
	return octx, err
}

// EndQuery and EndOperation: a long statement's planning state learns
// that the statement ended by itself before its context is cancelled.
// A prepare leaves the list at EndOperation, or at the EndQuery of its
// context with which the handler abandons it (longstmt.go).
func (p *processList) EndQuery(ctx *sql.Context) {
	sqlfront.EndPlanning(ctx)
	p.endPrepare(ctx)
	p.ProcessList.EndQuery(ctx)
}

func (p *processList) EndOperation(ctx *sql.Context) {
	sqlfront.EndPlanning(ctx)
	p.endPrepare(ctx)
	p.ProcessList.EndOperation(ctx)
}

// endPrepare takes the prepare of operation ctx out of the list.
func (p *processList) endPrepare(ctx *sql.Context) {
	if ctx.Session == nil {
		return
	}
	id := ctx.Session.ID()
	if v, ok := p.preparing.Load(id); ok && v.(*preparing).ctx == ctx {
		p.preparing.CompareAndDelete(id, v)
	}
}
