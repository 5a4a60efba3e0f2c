package sqlfront

import (
	"context"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/vitess/go/mysql"

	"lockstep/internal/storage"
)

// Options configure a Frontend.
type Options struct {
	User     string // initial account (default root)
	Password string
	Storage  storage.Options
}

// Frontend is the SQL engine over lockstep storage: the go-mysql-server
// engine, its catalog and the sessions' transactions.
type Frontend struct {
	store          *storage.Engine
	provider       *provider
	Engine         *sqle.Engine
	lockingQueries *lockingQueries
	user           string
}

// New builds a Frontend with an empty catalog.
func New(opts Options) (*Frontend, error) {
	if opts.User == "" {
		opts.User = "root"
	}
	fe := &Frontend{store: storage.New(opts.Storage), lockingQueries: newLockingQueries(), user: opts.User}
	fe.provider = &provider{fe: fe, dbs: map[string]*Database{}}
	if err := registerSystemVariables(fe); err != nil {
		return nil, err
	}
	registerStatusVariables(fe)
	a := analyzer.NewDefault(fe.provider)
	fe.Engine = sqle.New(a, &sqle.Config{})
	fe.Engine.Parser = &parser{Parser: sql.GlobalParser, fe: fe}
	mdb := a.Catalog.MySQLDb
	ed := mdb.Editor()
	mdb.AddSuperUser(ed, opts.User, "%", opts.Password)
	ed.Close()
	return fe, nil
}

// Storage returns the storage engine.
func (fe *Frontend) Storage() *storage.Engine { return fe.store }

// Close stops background work.
func (fe *Frontend) Close() {
	fe.store.Close()
}

// NewSession builds a session for a connection (server.SessionBuilder).
func (fe *Frontend) NewSession(ctx context.Context, conn *mysql.Conn, addr string) (sql.Session, error) {
	host, user := "", ""
	if u, ok := conn.UserData.(sql.MysqlConnectionUser); ok {
		host, user = u.Host, u.User
	}
	client := sql.Client{Address: host, User: user, Capabilities: conn.Capabilities}
	base := sql.NewBaseSessionWithClientServer(addr, client, conn.ConnectionID)
	return &Session{BaseSession: base, fe: fe}, nil
}

// NewLocalContext returns a context with a fresh session for in-process use
// (tests, benchmarks, bootstrap).
func (fe *Frontend) NewLocalContext(ctx context.Context) *sql.Context {
	base := sql.NewBaseSessionWithClientServer("local", sql.Client{User: fe.user, Address: "localhost"}, 0)
	s := &Session{BaseSession: base, fe: fe}
	c := sql.NewContext(ctx, sql.WithSession(s))
	c.Session.SetPrivilegeSet(nil, 0)
	c.SetCurrentDatabase("")
	return c
}
