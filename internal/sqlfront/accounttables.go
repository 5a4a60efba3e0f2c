package sqlfront

import (
	"fmt"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// Row writes to the account tables that go-mysql-server gets wrong.
//
// go-mysql-server stores the rows of db, tables_priv and procs_priv in
// the entry of the account they name, and its editors of these tables
// are views of the entries. Four of them fail:
//
//   - a row of db, tables_priv or procs_priv for an account with no entry
//     is refused ("matching entry not found"); a dump loads those tables
//     before user. The account is created first here, locked and without
//     a password, so nobody can log in as it until a user row (or ALTER
//     USER) gives it one.
//   - UPDATE of a user row left the old entry beside the new one (every
//     later login or SHOW GRANTS of that account then failed: "too many
//     matching users") and dropped the account's database, table and
//     routine privileges. Here the entry is replaced, keeping those.
//   - every write to procs_priv panicked ("implement me"). Here a row adds
//     or removes the routine privileges it names.
//   - deleting (or updating) a db row removed the account's table and
//     routine privileges in that database too. Here only the row's
//     database-level privileges go.
//
// The account tables have no indexes, so a write plan reaches them through
// a ResolvedTable, which withAccountEditors swaps for one whose editors
// do the above and hand everything else to go-mysql-server's.

// withAccountEditors is n with the account tables it writes wrapped by
// accountTable.
func withAccountEditors(n sql.Node, mdb *mysql_db.MySQLDb) (sql.Node, error) {
	out, _, err := transform.Node(n, func(c sql.Node) (sql.Node, transform.TreeIdentity, error) {
		rt, ok := c.(*plan.ResolvedTable)
		if !ok || accountsDB(rt.SqlDatabase) == nil {
			return c, transform.SameTree, nil
		}
		name := strings.ToLower(rt.Name())
		switch name {
		case "user", "db", "tables_priv", "procs_priv":
		default:
			return c, transform.SameTree, nil
		}
		nt, err := rt.WithTable(accountTable{Table: rt.Table, name: name, mdb: mdb})
		return nt, transform.NewTree, err
	})
	return out, err
}

// accountTable is an account table with lockstep's editors.
type accountTable struct {
	sql.Table
	name string
	mdb  *mysql_db.MySQLDb
}

var (
	_ sql.InsertableTable  = accountTable{}
	_ sql.UpdatableTable   = accountTable{}
	_ sql.DeletableTable   = accountTable{}
	_ sql.ReplaceableTable = accountTable{}
	_ sql.TableWrapper     = accountTable{}
)

func (t accountTable) Underlying() sql.Table { return t.Table }

func (t accountTable) editor(ctx *sql.Context) *accountEditor {
	e := &accountEditor{t: t}
	if t.name == "procs_priv" {
		return e
	}
	base := underlying(t.Table) // go-mysql-server's
	if it, ok := base.(sql.InsertableTable); ok {
		e.inner = it.Inserter(ctx)
	}
	if ut, ok := base.(sql.UpdatableTable); ok {
		e.innerUpd = ut.Updater(ctx)
	}
	if dt, ok := base.(sql.DeletableTable); ok {
		e.innerDel = dt.Deleter(ctx)
	}
	return e
}

func (t accountTable) Inserter(ctx *sql.Context) sql.RowInserter { return t.editor(ctx) }
func (t accountTable) Updater(ctx *sql.Context) sql.RowUpdater   { return t.editor(ctx) }
func (t accountTable) Deleter(ctx *sql.Context) sql.RowDeleter   { return t.editor(ctx) }
func (t accountTable) Replacer(ctx *sql.Context) sql.RowReplacer { return t.editor(ctx) }

// accountEditor is accountTable's editor for every kind of write.
type accountEditor struct {
	t        accountTable
	inner    sql.RowInserter
	innerUpd sql.RowUpdater
	innerDel sql.RowDeleter
}

func (e *accountEditor) StatementBegin(ctx *sql.Context) {
	e.each(func(ed innerEditor) error { ed.StatementBegin(ctx); return nil })
}

func (e *accountEditor) DiscardChanges(ctx *sql.Context, cause error) error {
	return e.each(func(ed innerEditor) error { return ed.DiscardChanges(ctx, cause) })
}

func (e *accountEditor) StatementComplete(ctx *sql.Context) error {
	return e.each(func(ed innerEditor) error { return ed.StatementComplete(ctx) })
}

func (e *accountEditor) Close(ctx *sql.Context) error {
	return e.each(func(ed innerEditor) error { return ed.Close(ctx) })
}

// innerEditor is what go-mysql-server's editors share.
type innerEditor interface {
	sql.EditOpenerCloser
	sql.Closer
}

// each calls f on each of go-mysql-server's editors in use and returns the
// first error.
func (e *accountEditor) each(f func(innerEditor) error) error {
	var err error
	for _, ed := range []innerEditor{e.inner, e.innerUpd, e.innerDel} {
		if ed == nil {
			continue
		}
		if ferr := f(ed); err == nil {
			err = ferr
		}
	}
	return err
}

func (e *accountEditor) Insert(ctx *sql.Context, row sql.Row) error {
	if e.t.name != "user" {
		e.ensureAccount(row)
	}
	if e.t.name == "procs_priv" {
		return e.routinePrivs(ctx, row, true)
	}
	if e.inner == nil {
		return plan.ErrInsertIntoNotSupported.New()
	}
	return e.inner.Insert(ctx, row)
}

func (e *accountEditor) Delete(ctx *sql.Context, row sql.Row) error {
	switch e.t.name {
	case "procs_priv":
		return e.routinePrivs(ctx, row, false)
	case "db":
		return e.deleteDBRow(row)
	}
	if e.innerDel == nil {
		return plan.ErrDeleteFromNotSupported.New()
	}
	return e.innerDel.Delete(ctx, row)
}

func (e *accountEditor) Update(ctx *sql.Context, old, new sql.Row) error {
	switch e.t.name {
	case "procs_priv":
		if err := e.routinePrivs(ctx, old, false); err != nil {
			return err
		}
		e.ensureAccount(new)
		return e.routinePrivs(ctx, new, true)
	case "user":
		return e.updateUser(ctx, old, new)
	case "db":
		if err := e.deleteDBRow(old); err != nil {
			return err
		}
		return e.Insert(ctx, new)
	}
	if e.innerUpd == nil {
		return plan.ErrUpdateNotSupported.New()
	}
	return e.innerUpd.Update(ctx, old, new)
}

// ensureAccount creates the account a db, tables_priv or procs_priv row
// names (Host its first column, User its third) if it has no entry.
func (e *accountEditor) ensureAccount(row sql.Row) {
	host, hok := row[0].(string)
	user, uok := row[2].(string)
	if !hok || !uok {
		return
	}
	ed := e.t.mdb.Editor()
	defer ed.Close()
	if _, ok := ed.GetUser(mysql_db.UserPrimaryKey{Host: host, User: user}); !ok {
		ed.PutUser(&mysql_db.User{
			User: user, Host: host, PrivilegeSet: mysql_db.NewPrivilegeSet(),
			Plugin: "mysql_native_password", Locked: true, PasswordLastChanged: time.Now().UTC(),
		})
	}
}

// updateUser replaces the entry of the user row old by one built from
// new, keeping what the entry holds beyond the row.
func (e *accountEditor) updateUser(ctx *sql.Context, old, new sql.Row) error {
	nu, err := mysql_db.UserFromRow(ctx, new)
	if err != nil {
		return err
	}
	prev, err := mysql_db.UserFromRow(ctx, old)
	if err != nil {
		return err
	}
	ed := e.t.mdb.Editor()
	defer ed.Close()
	oldKey, newKey := userKey(prev), userKey(nu)
	cur, ok := ed.GetUser(oldKey)
	if !ok {
		return fmt.Errorf("account '%s'@'%s' changed while it was updated", prev.User, prev.Host)
	}
	if newKey != oldKey {
		if _, taken := ed.GetUser(newKey); taken {
			return sql.ErrPrimaryKeyViolation.New()
		}
	}
	nu = keptOf(cur).givenTo(nu)
	nu.IsEphemeral = cur.IsEphemeral
	replaceUser(ed, oldKey, nu)
	return nil
}

// deleteDBRow removes the database-level privileges a db row grants.
// (go-mysql-server's removes the account's table and routine privileges
// in that database too.)
func (e *accountEditor) deleteDBRow(row sql.Row) error {
	host, _ := row[0].(string)
	db, _ := row[1].(string)
	user, _ := row[2].(string)
	ed := e.t.mdb.Editor()
	defer ed.Close()
	key := mysql_db.UserPrimaryKey{Host: host, User: user}
	cur, ok := ed.GetUser(key)
	if !ok {
		return nil
	}
	nu := mysql_db.UserCopy(cur)
	keep := cur.PrivilegeSet.Database(db)
	nu.PrivilegeSet.ClearDatabase(db)
	for _, t := range keep.GetTables() {
		if privs := t.ToSlice(); len(privs) > 0 {
			nu.PrivilegeSet.AddTable(db, t.Name(), privs...)
		}
		for _, c := range t.GetColumns() {
			nu.PrivilegeSet.AddColumn(db, t.Name(), c.Name(), c.ToSlice()...)
		}
	}
	for _, r := range keep.GetRoutines() {
		nu.PrivilegeSet.AddRoutine(db, r.RoutineName(), strings.EqualFold(r.RoutineType(), "PROCEDURE"), r.ToSlice()...)
	}
	replaceUser(ed, key, nu)
	return nil
}

// routinePrivs adds (or removes) the routine privileges a procs_priv row
// grants.
func (e *accountEditor) routinePrivs(ctx *sql.Context, row sql.Row, add bool) error {
	if len(row) < 7 {
		return fmt.Errorf("procs_priv row has %d columns", len(row))
	}
	host, _ := row[0].(string)
	db, _ := row[1].(string)
	user, _ := row[2].(string)
	name, _ := row[3].(string)
	isProc, err := enumText(ctx, e.t.Schema()[4].Type, row[4])
	if err != nil {
		return err
	}
	privText, err := enumText(ctx, e.t.Schema()[6].Type, row[6])
	if err != nil {
		return err
	}
	var privs []sql.PrivilegeType
	for _, p := range strings.Split(privText, ",") {
		switch strings.ToLower(strings.TrimSpace(p)) {
		case "execute":
			privs = append(privs, sql.PrivilegeType_Execute)
		case "alter routine":
			privs = append(privs, sql.PrivilegeType_AlterRoutine)
		case "grant":
			privs = append(privs, sql.PrivilegeType_GrantOption)
		}
	}
	ed := e.t.mdb.Editor()
	defer ed.Close()
	key := mysql_db.UserPrimaryKey{Host: host, User: user}
	cur, ok := ed.GetUser(key)
	if !ok {
		if add {
			return fmt.Errorf("no account '%s'@'%s' for a procs_priv row", user, host)
		}
		return nil
	}
	nu := mysql_db.UserCopy(cur)
	proc := strings.EqualFold(isProc, "PROCEDURE")
	if add {
		nu.PrivilegeSet.AddRoutine(db, name, proc, privs...)
	} else {
		nu.PrivilegeSet.RemoveRoutine(db, name, proc, sql.PrivilegeType_Execute, sql.PrivilegeType_AlterRoutine, sql.PrivilegeType_GrantOption)
	}
	replaceUser(ed, key, nu)
	return nil
}

// enumText is an ENUM's or SET's value v (its index or bits after an
// INSERT's conversion, its text when read) as text.
func enumText(ctx *sql.Context, typ sql.Type, v any) (string, error) {
	switch t := typ.(type) {
	case sql.EnumType:
		if i, ok := v.(uint16); ok {
			s, _ := t.At(int(i))
			return s, nil
		}
	case sql.SetType:
		if b, ok := v.(uint64); ok {
			return t.BitsToString(b)
		}
	}
	if s, ok := v.(string); ok {
		return s, nil
	}
	return "", fmt.Errorf("unexpected %T value in an account table", v)
}
