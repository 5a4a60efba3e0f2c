package sqlfront

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
)

// Which databases an account may use and see, as MySQL 8 decides.
//
// MySQL lets an account USE a database (the statement, COM_INIT_DB, a
// connection's initial database) when it holds a privilege of the data
// kind (MySQL's DB_OP_ACLS: SELECT, INSERT, ..., TRIGGER) on *.* or on the
// database, or any privilege on a table, column or routine inside it;
// else 1044. Global privileges of other kinds (FILE, PROCESS, SUPER,
// RELOAD, SHUTDOWN, REPLICATION CLIENT, SHOW DATABASES, CREATE USER, ...)
// do not open a database. SHOW DATABASES (and information_schema.SCHEMATA,
// which MySQL 8 lists it from) shows the databases the account could use,
// and those on which it holds GRANT OPTION; with SHOW DATABASES or GRANT
// OPTION on *.* it shows every one. information_schema is open to all.
//
// go-mysql-server opened and listed every database to an account with any
// global privilege, and the mysql database to every account. Its catalog
// asks lockstep's provider for each database after its own check, and
// asks for mysql never: the provider the catalog is given (dbAccess)
// refuses and hides the user databases, and the USE and SHOW DATABASES
// plans and COM_INIT_DB check mysql (serverplan.go, CheckDatabaseAccess).

// dbOpPrivileges are MySQL's DB_OP_ACLS.
var dbOpPrivileges = []sql.PrivilegeType{
	sql.PrivilegeType_Select, sql.PrivilegeType_Insert, sql.PrivilegeType_Update,
	sql.PrivilegeType_Delete, sql.PrivilegeType_Create, sql.PrivilegeType_Drop,
	sql.PrivilegeType_References, sql.PrivilegeType_Index, sql.PrivilegeType_Alter,
	sql.PrivilegeType_CreateTempTable, sql.PrivilegeType_LockTables, sql.PrivilegeType_Execute,
	sql.PrivilegeType_CreateView, sql.PrivilegeType_ShowView, sql.PrivilegeType_CreateRoutine,
	sql.PrivilegeType_AlterRoutine, sql.PrivilegeType_Event, sql.PrivilegeType_Trigger,
}

// hasAnyGlobal reports whether ps holds one of privs on *.*.
func hasAnyGlobal(ps mysql_db.PrivilegeSet, privs ...sql.PrivilegeType) bool {
	for _, p := range privs {
		if ps.Has(p) {
			return true
		}
	}
	return false
}

// mayUseDatabase is MySQL's check for USE db by an account holding ps.
// The database's own grants are looked at first: an application's
// account usually has them, and no global ones.
func mayUseDatabase(ps mysql_db.PrivilegeSet, db string) bool {
	name := db
	if name == logTablesDB {
		name = "mysql"
	}
	return ps.Database(name).HasPrivileges() || hasAnyGlobal(ps, dbOpPrivileges...) ||
		strings.EqualFold(db, "information_schema")
}

// mayListDatabase is MySQL's check for SHOW DATABASES listing db.
func mayListDatabase(ps mysql_db.PrivilegeSet, db string) bool {
	return hasAnyGlobal(ps, sql.PrivilegeType_ShowDB, sql.PrivilegeType_GrantOption) || mayUseDatabase(ps, db)
}

// accountPrivileges is the privilege set of ctx's account; ok is false
// when accounts are not checked (grant tables disabled, or no session).
func accountPrivileges(ctx *sql.Context, mdb *mysql_db.MySQLDb) (ps mysql_db.PrivilegeSet, ok bool) {
	if mdb == nil || !mdb.Enabled() || ctx == nil || ctx.Session == nil {
		return ps, false
	}
	return mdb.UserActivePrivilegeSet(ctx), true
}

// errDatabaseDenied is go-mysql-server's refusal of db to ctx's account,
// worded as its own (internal/server gives it MySQL's number, 1044).
func errDatabaseDenied(ctx *sql.Context, db string) error {
	client := ctx.Session.Client()
	return sql.ErrDatabaseAccessDeniedForUser.New(mysql_db.User{User: client.User, Host: client.Address}.UserHostToString("'"), db)
}

// dbAccess is the provider as go-mysql-server's catalog sees it: a
// database the account may not use is refused (Database, HasDatabase)
// and not listed (AllDatabases). The frontend's own work (checkpoints, the
// DDL log, foreign keys) reads fe.provider, which keeps every database.
type dbAccess struct {
	*provider
}

func (d dbAccess) mdb() *mysql_db.MySQLDb {
	if d.fe.Engine == nil {
		return nil
	}
	return d.fe.Engine.Analyzer.Catalog.MySQLDb
}

func (d dbAccess) Database(ctx *sql.Context, name string) (sql.Database, error) {
	if name == "" {
		return d.provider.Database(ctx, name)
	}
	if ps, ok := accountPrivileges(ctx, d.mdb()); ok && !mayUseDatabase(ps, name) {
		return nil, errDatabaseDenied(ctx, name) // before "unknown database", as MySQL
	}
	return d.provider.Database(ctx, name)
}

func (d dbAccess) HasDatabase(ctx *sql.Context, name string) bool {
	if ps, ok := accountPrivileges(ctx, d.mdb()); ok && !mayUseDatabase(ps, name) {
		return false
	}
	return d.provider.HasDatabase(ctx, name)
}

func (d dbAccess) AllDatabases(ctx *sql.Context) []sql.Database {
	dbs := d.provider.AllDatabases(ctx)
	ps, ok := accountPrivileges(ctx, d.mdb())
	if !ok {
		return dbs
	}
	out := dbs[:0]
	for _, db := range dbs {
		if mayListDatabase(ps, db.Name()) {
			out = append(out, db)
		}
	}
	return out
}

// mayUse reports whether ctx's account may use database db.
func (fe *Frontend) mayUse(ctx *sql.Context, db string) bool {
	ps, ok := accountPrivileges(ctx, fe.Engine.Analyzer.Catalog.MySQLDb)
	return !ok || mayUseDatabase(ps, db)
}

// mayList reports whether SHOW DATABASES lists db to ctx's account.
func (fe *Frontend) mayList(ctx *sql.Context, db string) bool {
	ps, ok := accountPrivileges(ctx, fe.Engine.Analyzer.Catalog.MySQLDb)
	return !ok || mayListDatabase(ps, db)
}

// CheckDatabaseAccess is MySQL's check before connection connID's
// session changes to database db (COM_INIT_DB, a connection's initial
// database): nil if its account may use db, else the refusal (mapped to
// 1044 by internal/server).
func (fe *Frontend) CheckDatabaseAccess(connID uint32, db string) error {
	s := fe.session(connID)
	if s == nil {
		return fmt.Errorf("database access check: no session for connection %d", connID)
	}
	ctx := s.fastContext()
	if fe.mayUse(ctx, db) {
		return nil
	}
	return errDatabaseDenied(ctx, db)
}

// listedDatabasesIter keeps the rows of SHOW DATABASES whose database
// the account may see (go-mysql-server adds mysql for everyone).
type listedDatabasesIter struct {
	sql.RowIter
	fe *Frontend
}

func (it listedDatabasesIter) Next(ctx *sql.Context) (sql.Row, error) {
	for {
		row, err := it.RowIter.Next(ctx)
		if err != nil {
			return nil, err
		}
		if name, ok := row[0].(string); !ok || it.fe.mayList(ctx, name) {
			return row, nil
		}
	}
}
