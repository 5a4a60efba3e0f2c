package sqlfront

import (
	"context"
	"fmt"
	"lockstep/internal/mdl"
	"sync"
	"sync/atomic"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/vitess/go/mysql"

	"lockstep/internal/stat"
	"lockstep/internal/storage"
)

// Options configure a Frontend.
type Options struct {
	User     string // initial account (default root)
	Password string
	Store    *storage.Engine // the storage engine; nil: one with Storage options
	Storage  storage.Options
	// CollationServer is the server's initial @@global.collation_server,
	// what databases are created with ("": MySQL 8's utf8mb4_0900_ai_ci).
	CollationServer string
	// DoubleIntegerAggregates keeps go-mysql-server's DOUBLE for SUM and
	// AVG over integers (MySQL's is an exact DECIMAL, sumrule.go): for the
	// engine tests, whose expected results encode go-mysql-server's typing.
	DoubleIntegerAggregates bool
	// NoMetadataLocks: statements take no metadata locks (mdl.go). For
	// go-mysql-server's engine tests, which run statements without the
	// protocol's statement cycle (nothing ends a statement's locks) and
	// run every client of a script in one goroutine (a DDL waiting for
	// another client's transaction could never be granted).
	NoMetadataLocks bool
}

// Frontend is the SQL engine over lockstep storage: the go-mysql-server
// engine, its catalog and the sessions' transactions.
type Frontend struct {
	store         *storage.Engine
	provider      *provider
	Engine        *sqle.Engine
	exec          sql.NodeExecBuilder // the engine's, for nodes execOverride builds
	user          string
	password      string // the initial account's (Options.Password)
	doubleIntAggs bool   // Options.DoubleIntegerAggregates
	acct          accounts

	ddlMu sync.Mutex   // serialises logged DDL statements (see ddllog.go)
	mdl   *mdl.Manager // metadata locks (mdl.go)
	// ddlGranted counts the statements granted an exclusive metadata lock,
	// ddlEnded those of them that gave it back (mdl.go, RetryAfterDDL).
	ddlGranted, ddlEnded atomic.Uint64
	// ddlEndCh is closed (under ddlEndMu) when ddlEnded grows, for
	// RetryAfterDDL's waiters; nil when nobody waits.
	ddlEndMu sync.Mutex
	ddlEndCh chan struct{}
	// mdlReplans counts statements planned again after DDL changed a
	// table they found (Lockstep_mdl_replans).
	mdlReplans atomic.Int64
	// ddlWaiters: the connections waiting in RetryAfterDDL (mdl.go).
	ddlWaiters sync.Map
	// ddlWaiting counts DDL statements waiting for ddlMu (a checkpoint
	// holding it stops pacing itself while one waits; DDLWaiting).
	ddlWaiting atomic.Int32
	ddlLog     DDLLogger
	// replayUndo undoes the DDL statement recovery replayed last, should
	// a failure mark follow it (ReplayDDL, ReplayFailedDDL).
	replayUndo []func()

	extraStatus atomic.Pointer[[]func(map[string]int64)]
	vars        serverVars   // this server's values of per-server variables (servervars.go)
	connections atomic.Int64 // connections opened (SHOW STATUS Connections)

	sessions sessionTable // by connection id, for the protocol handler (sessions.go)

	groupMembers  atomic.Pointer[func() []GroupMember]   // replication_group_members' rows (perfschema.go)
	replicaStatus atomic.Pointer[func() []ReplicaStatus] // SHOW REPLICA STATUS's rows (replicastatus.go)

	fast fastCounters

	anyFK         atomic.Bool // a table has declared a foreign key (fk.go)
	anyTrigger    atomic.Bool // a trigger has been created (fastWriteBlocked)
	fkGen         atomic.Uint64
	fkParentCache atomic.Pointer[fkParentSet]

	// files is the policy for files on the server's host (fileaccess.go);
	// nil until the server sets it: no file access.
	files atomic.Pointer[FileAccess]

	readOnly    readOnlyState                // read_only / super_read_only (readonly.go)
	gtidSource  gtidSourceHolder             // the server's executed GTIDs (gtidwait.go)
	gcPercent   atomic.Pointer[func() int64] // the GC pacer's percent (SHOW STATUS)
	readBarrier readBarrierHolder            // a group member's read point (consistency.go)
	groupAdmin  groupAdminHolder             // a group member's administration (groupadmin.go)
}

// New builds a Frontend with an empty catalog.
func New(opts Options) (*Frontend, error) {
	if opts.User == "" {
		opts.User = "root"
	}
	store := opts.Store
	if store == nil {
		store = storage.New(opts.Storage)
	}
	fe := &Frontend{store: store, user: opts.User, password: opts.Password, doubleIntAggs: opts.DoubleIntegerAggregates}
	if !opts.NoMetadataLocks {
		fe.mdl = mdl.NewManager()
	}
	fe.provider = &provider{fe: fe, dbs: map[string]*Database{}}
	registerSystemVariables()
	registerMDLRule()
	if c := opts.CollationServer; c != "" {
		if _, err := sql.ParseCollation("", c, false); err != nil {
			return nil, fmt.Errorf("collation_server: %w", err)
		}
		fe.vars.setGlobal("collation_server", c)
		fe.vars.setGlobal("collation_connection", c)
	}
	a := analyzer.NewBuilder(dbAccess{fe.provider}).AddPreAnalyzeRule(viewDatabaseRuleID, viewDatabaseRule).AddPreAnalyzeRule(globalVarsRuleID, globalVarsRule).AddPreAnalyzeRule(replicaStatusRuleID, replicaStatusRule).AddPreAnalyzeRule(constPropRuleID, constPropRule).AddPostAnalyzeRule(longerPrefixRuleID, longerPrefixRule).AddPostAnalyzeRule(idxSortRuleID, idxSortRule).AddPostAnalyzeRule(explainRowsRuleID, explainRowsRule).AddPostAnalyzeRule(lookupJoinRuleID, lookupJoinRule).AddPostAnalyzeRule(sumDecimalRuleID, sumDecimalRule).AddPostAnalyzeRule(collationHashRuleID, collationHashRule).AddPostAnalyzeRule(intArithRuleID, intArithRule).AddPostAnalyzeRule(castIntRuleID, castIntRule).AddPostAnalyzeRule(warningOrderRuleID, warningOrderRule).AddPostAnalyzeRule(nullableDivRuleID, nullableDivRule).Build()
	if !withRuleWrapped(a, "applyTriggers", func(r analyzer.RuleFunc) analyzer.RuleFunc {
		return planTriggers(inTargetDatabase(r))
	}) {
		return nil, fmt.Errorf("go-mysql-server's analyzer has no applyTriggers rule to wrap (routinedb.go)")
	}
	if !withRuleWrapped(a, "validateDropTables", droppableAccountTables) {
		return nil, fmt.Errorf("go-mysql-server's analyzer has no validateDropTables rule to wrap (granttables.go)")
	}
	// ANALYZE TABLE of an empty table (stats.go).
	a.Catalog.StatsProvider = safeStats{a.Catalog.StatsProvider}
	listMySQLSchema() // mysqlschema.go
	if err := triggersInOwnDatabase(sql.NewEmptyContext(), a.Catalog); err != nil {
		return nil, err
	}
	interruptibleAnalysis(a) // interrupt.go
	a.ExecBuilder = newExecOverride(fe, nil)
	fe.exec = a.ExecBuilder
	fe.Engine = sqle.New(a, &sqle.Config{})
	fe.Engine.Parser = &parser{Parser: mysqlParser, fe: fe}
	a.Runner = viewRunner{inner: fe.Engine} // viewroutine.go
	a.Catalog.MySQLDb.SetPersister(accountsPersister{fe: fe})
	a.Catalog.RegisterFunction(sql.NewEmptyContext(), sql.Function2{Name: "truncate", Fn: newTruncate})
	a.Catalog.RegisterFunction(sql.NewEmptyContext(), sql.Function1{Name: bitNotName, Fn: newBitNot})
	if err := fe.watchReadOnly(); err != nil {
		return nil, err
	}
	fe.ensureInitialAccount()
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
	s := &Session{BaseSession: base, fe: fe, connID: conn.ConnectionID}
	if conn.Conn != nil { // a test harness's connection may have none
		s.clientHost = ClientHost(conn.RemoteAddr()) // userfunc.go
	}
	if err := fe.initSessionVars(s); err != nil {
		return nil, err
	}
	if reset := fe.sessions.put(conn.ConnectionID, s); !reset {
		stat.Inc(&fe.connections) // not COM_RESET_CONNECTION, which replaces the session
	}
	return s, nil
}

// InTransaction reports whether the session of connection connID is inside
// a transaction as MySQL's SERVER_STATUS_IN_TRANS flag means it: after
// BEGIN / START TRANSACTION until it ends, or with autocommit off once a
// statement has touched data. ok is false for an unknown connection. It is
// called from the connection's own goroutine, between statements.
func (fe *Frontend) InTransaction(connID uint32) (inTrans, ok bool) {
	s := fe.session(connID)
	if s == nil {
		return false, false
	}
	if s.GetIgnoreAutoCommit() {
		return true, true
	}
	return !s.autocommit() && s.tx != nil && !s.tx.Done(), true
}

// NewLocalContext returns a context with a fresh session for in-process use
// (tests, benchmarks, bootstrap).
func (fe *Frontend) NewLocalContext(ctx context.Context) *sql.Context {
	base := sql.NewBaseSessionWithClientServer("local", sql.Client{User: fe.user, Address: "localhost"}, 0)
	s := &Session{BaseSession: base, fe: fe}
	_ = fe.initSessionVars(s) // values this server already accepted with SET GLOBAL
	c := sql.NewContext(ctx, sql.WithSession(s))
	c.Session.SetPrivilegeSet(nil, 0)
	c.SetCurrentDatabase("")
	return c
}
