package sqlfront

import (
	"io"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// Writes to the account tables (mysql.user, db, tables_priv, procs_priv,
// role_edges).
//
// go-mysql-server keeps the accounts as users, each holding all of its
// privileges; the tables are views of them, and a write takes effect at
// once (MySQL: at FLUSH PRIVILEGES). Two things are added here:
//
//   - Every INSERT, UPDATE, DELETE or REPLACE on an account table is
//     logged when the statement ends, as account statements are
//     (accounts.go): go-mysql-server hands the accounts to the persister
//     only for account statements and FLUSH PRIVILEGES, so a crash lost
//     such writes.
//   - A dump's reload works. mysqldump --all-databases writes, per table
//     and in alphabetical order, DROP TABLE IF EXISTS t; CREATE TABLE t
//     (...); INSERT INTO t VALUES ... — db before user. go-mysql-server
//     refuses DROP and CREATE on these tables. Here DROP TABLE empties the
//     table (db, tables_priv, procs_priv, role_edges: the privileges those
//     rows grant), except user; CREATE TABLE of a table dropped in the same
//     session succeeds and changes nothing; ALTER TABLE ... DISABLE/ENABLE
//     KEYS does nothing. DROP TABLE user only notes that the next INSERT
//     INTO user in this session replaces the users: emptying user at once
//     would take every privilege from the session doing the reload. That
//     INSERT (its privileges checked before) removes every user and adds
//     the dumped ones; each keeps the database, table and routine
//     privileges and dynamic privileges its previous entry held — the
//     db/tables_priv/procs_priv rows loaded just before, which
//     go-mysql-server stores in the users — and whether it was a role.

// grantReload is a session's state of a reload of the account tables.
type grantReload struct {
	dropped     map[string]bool // tables DROPped and not yet CREATEd again
	userPending bool            // DROP TABLE user seen; next INSERT INTO user replaces
	kept        map[mysql_db.UserPrimaryKey]keptAccount
}

// keptAccount is what a user's entry held that its user-table row does
// not carry.
type keptAccount struct {
	privs  mysql_db.PrivilegeSet // all but the global static privileges
	isRole bool
	super  bool
}

// accountTarget is the account table a write node changes: the MySQLDb and
// the table's lower-case name (nil, "" when it changes none).
// It runs for every node a plan builds: anything but a write to the mysql
// database is turned away without walking the plan.
func accountTarget(n sql.Node) (*mysql_db.MySQLDb, string) {
	var target sql.Node
	switch n := n.(type) {
	case *plan.InsertInto:
		if accountsDB(n.Database()) == nil {
			return nil, ""
		}
		target = n.Destination
	case *plan.Update:
		if !strings.EqualFold(n.Database(), "mysql") {
			return nil, ""
		}
		target = n
	case *plan.DeleteFrom:
		if !strings.EqualFold(n.Database(), "mysql") {
			return nil, ""
		}
		target = n
	default:
		return nil, ""
	}
	var mdb *mysql_db.MySQLDb
	var name string
	transform.Inspect(target, func(c sql.Node) bool {
		if rt, ok := c.(*plan.ResolvedTable); ok {
			if m := accountsDB(rt.SqlDatabase); m != nil {
				mdb, name = m, strings.ToLower(rt.Name())
			}
		}
		return mdb == nil
	})
	return mdb, name
}

// buildAccountWrite builds an INSERT, UPDATE or DELETE on an account table
// (build builds the node as it would be otherwise): it replaces the users
// first if the session's reload asks, and logs the accounts when the
// statement ends.
func (o execOverride) buildAccountWrite(ctx *sql.Context, mdb *mysql_db.MySQLDb, table string, n sql.Node, build func(sql.Node) (sql.RowIter, error)) (sql.RowIter, error) {
	s, _ := ctx.Session.(*Session)
	var kept map[mysql_db.UserPrimaryKey]keptAccount
	if _, insert := n.(*plan.InsertInto); insert && table == "user" && s != nil {
		if s.grants.userPending {
			s.grants.userPending = false
			s.grants.kept = removeUsers(mdb)
		}
		kept = s.grants.kept
	}
	n, err := withAccountEditors(n, mdb) // accounttables.go
	if err != nil {
		return nil, err
	}
	iter, err := build(n)
	if err != nil {
		return nil, err
	}
	return &accountWriteIter{RowIter: iter, mdb: mdb, kept: kept}, nil
}

// removeUsers removes every user and returns what each held beyond its
// user-table row.
func removeUsers(mdb *mysql_db.MySQLDb) map[mysql_db.UserPrimaryKey]keptAccount {
	ed := mdb.Editor()
	defer ed.Close()
	kept := map[mysql_db.UserPrimaryKey]keptAccount{}
	var keys []mysql_db.UserPrimaryKey
	ed.VisitUsers(func(u *mysql_db.User) {
		if u.IsEphemeral {
			return
		}
		k := userKey(u)
		kept[k] = keptOf(u)
		keys = append(keys, k)
	})
	for _, k := range keys {
		ed.RemoveUser(k)
	}
	return kept
}

// accountWriteIter logs the accounts when the write ends, after giving
// users a reload inserted back what they kept.
type accountWriteIter struct {
	sql.RowIter
	mdb  *mysql_db.MySQLDb
	kept map[mysql_db.UserPrimaryKey]keptAccount
}

// The iterator is mutable so that go-mysql-server's accumulator (which
// turns the written rows into an OK packet) goes inside it.
var _ sql.MutableRowIter = (*accountWriteIter)(nil)

func (it *accountWriteIter) GetChildIter() sql.RowIter { return it.RowIter }

func (it *accountWriteIter) WithChildIter(c sql.RowIter) sql.RowIter {
	out := *it
	out.RowIter = c
	return &out
}

func (it *accountWriteIter) Close(ctx *sql.Context) error {
	err := it.RowIter.Close(ctx)
	ed := it.mdb.Editor()
	defer ed.Close()
	if len(it.kept) > 0 {
		var put []*mysql_db.User
		ed.VisitUsers(func(u *mysql_db.User) {
			if k, ok := it.kept[userKey(u)]; ok {
				put = append(put, k.givenTo(u))
			}
		})
		for _, u := range put {
			replaceUser(ed, userKey(u), u)
		}
	}
	if perr := it.mdb.Persist(ctx, ed); err == nil {
		err = perr
	}
	return err
}

func userKey(u *mysql_db.User) mysql_db.UserPrimaryKey {
	return mysql_db.UserPrimaryKey{Host: u.Host, User: u.User}
}

// replaceUser puts u in place of the entry under key (go-mysql-server's
// PutUser adds a changed entry beside the old one).
func replaceUser(ed *mysql_db.Editor, key mysql_db.UserPrimaryKey, u *mysql_db.User) {
	ed.RemoveUser(key)
	ed.PutUser(u)
}

// keptOf is what an entry holds beyond its user-table row.
func keptOf(u *mysql_db.User) keptAccount {
	privs := mysql_db.NewPrivilegeSet()
	privs.UnionWith(u.PrivilegeSet)
	privs.RemoveGlobalStatic(mysql_db.NewPrivilegeSetWithAllPrivileges().ToSlice()...)
	return keptAccount{privs: privs, isRole: u.IsRole, super: u.IsSuperUser}
}

// givenTo is a copy of u, built from a user-table row, with k added.
func (k keptAccount) givenTo(u *mysql_db.User) *mysql_db.User {
	nu := mysql_db.UserCopy(u)
	nu.PrivilegeSet.UnionWith(k.privs)
	nu.IsRole, nu.IsSuperUser = k.isRole, k.super
	return nu
}

// buildAccountDDL runs DROP TABLE, CREATE TABLE and ALTER TABLE ... KEYS
// on account tables as a reload needs them (nil, nil: not such a
// statement).
func (o execOverride) buildAccountDDL(ctx *sql.Context, n sql.Node) (sql.RowIter, error) {
	s, _ := ctx.Session.(*Session)
	if s == nil {
		return nil, nil
	}
	switch n := n.(type) {
	case *plan.DropTable:
		mdb, names := droppedAccountTables(n)
		if mdb == nil {
			return nil, nil
		}
		if err := s.dropAccountTables(ctx, mdb, names); err != nil {
			return nil, err
		}
		return okResult(0), nil
	case *plan.CreateTable:
		if n.Temporary() || accountsDB(n.Db) == nil {
			return nil, nil
		}
		name := strings.ToLower(n.Name())
		if s.grants.dropped[name] {
			delete(s.grants.dropped, name)
			return okResult(0), nil
		}
		if _, ok, _ := n.Db.GetTableInsensitive(ctx, name); ok {
			if n.IfNotExists() {
				return okResult(0), nil
			}
			return nil, sql.ErrTableAlreadyExists.New(n.Name())
		}
	case *plan.AlterIndex:
		if n.Action != plan.IndexAction_DisableEnableKeys {
			return nil, nil
		}
		if rt, ok := n.Table.(*plan.ResolvedTable); ok && accountsDB(rt.SqlDatabase) != nil {
			return okResult(0), nil
		}
	}
	return nil, nil
}

// droppedAccountTables are the tables a DROP TABLE drops if all are
// account tables (nil, nil if not).
func droppedAccountTables(n *plan.DropTable) (*mysql_db.MySQLDb, []string) {
	var mdb *mysql_db.MySQLDb
	var names []string
	for _, c := range n.Tables {
		rt, ok := c.(*plan.ResolvedTable)
		if !ok {
			return nil, nil
		}
		m := accountsDB(rt.SqlDatabase)
		if m == nil {
			return nil, nil
		}
		mdb = m
		names = append(names, strings.ToLower(rt.Name()))
	}
	return mdb, names
}

// droppableAccountTables lets go-mysql-server's check that a DROP TABLE's
// databases can drop tables pass a DROP TABLE of account tables, which
// this server runs (buildAccountDDL).
func droppableAccountTables(rule analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
		if dt, ok := n.(*plan.DropTable); ok {
			if mdb, _ := droppedAccountTables(dt); mdb != nil {
				return n, transform.SameTree, nil
			}
		}
		return rule(ctx, a, n, scope, sel, qFlags)
	}
}

// dropAccountTables is DROP TABLE of account tables (see the top of the
// file): the rows of each but user are deleted, and each is noted as
// dropped for the CREATE TABLE that follows in a dump.
func (s *Session) dropAccountTables(ctx *sql.Context, mdb *mysql_db.MySQLDb, names []string) error {
	if s.grants.dropped == nil {
		s.grants.dropped = map[string]bool{}
	}
	for _, name := range names {
		s.grants.dropped[name] = true
		if name == "user" {
			s.grants.userPending = true
			s.grants.kept = nil
			continue
		}
		if err := emptyTable(ctx, mdb, name); err != nil {
			return err
		}
	}
	ed := mdb.Editor()
	defer ed.Close()
	return mdb.Persist(ctx, ed)
}

// emptyTable deletes every row of the account table name.
func emptyTable(ctx *sql.Context, mdb *mysql_db.MySQLDb, name string) error {
	t, ok, err := mdb.GetTableInsensitive(ctx, name)
	if err != nil || !ok {
		return err
	}
	switch name {
	case "db", "tables_priv", "procs_priv", "role_edges":
	default:
		return nil // the help tables and slave_master_info stay as they are
	}
	var dt sql.DeletableTable = accountTable{Table: t, name: name, mdb: mdb}
	if name == "role_edges" {
		dt = t.(sql.DeletableTable)
	}
	rows, err := accountRows(ctx, t)
	if err != nil {
		return err
	}
	del := dt.Deleter(ctx)
	for _, r := range rows {
		if err := del.Delete(ctx, r); err != nil {
			_ = del.Close(ctx)
			return err
		}
	}
	if err := del.StatementComplete(ctx); err != nil {
		_ = del.Close(ctx)
		return err
	}
	return del.Close(ctx)
}

// accountRows reads every row of t.
func accountRows(ctx *sql.Context, t sql.Table) ([]sql.Row, error) {
	parts, err := t.Partitions(ctx)
	if err != nil {
		return nil, err
	}
	defer parts.Close(ctx)
	var out []sql.Row
	for {
		p, err := parts.Next(ctx)
		if err != nil {
			if err == io.EOF {
				return out, nil
			}
			return nil, err
		}
		iter, err := t.PartitionRows(ctx, p)
		if err != nil {
			return nil, err
		}
		rows, err := sql.RowIterToRows(ctx, iter)
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
}

// okResult is an OK packet's row with n affected rows.
func okResult(n uint64) sql.RowIter {
	return sql.RowsToRowIter(sql.NewRow(types.NewOkResult(int(n))))
}
