package sqlfront

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
)

// Accounts and the log.
//
// go-mysql-server owns the accounts (its mysql database: users, password
// hashes, privileges, roles) and checks privileges for the statements it
// runs. After every account statement (CREATE/ALTER/DROP/RENAME USER,
// GRANT, REVOKE, SET PASSWORD, CREATE/DROP ROLE) it hands the whole of
// them, serialised, to a persister. Lockstep's persister logs them as one
// accounts record before the statement returns, so an acknowledged account
// change survives a crash; recovery (and a replica) installs the last
// record's accounts, and a checkpoint carries them. The initial account
// (--user, --password) is created at start when it does not exist; an
// existing one keeps its password, as MySQL's root keeps the one set after
// --initialize.

// AccountsLogger makes an account change durable. SetDDLLogger installs
// the DDL logger as the accounts logger too when it implements this; with
// none, changes are not logged.
type AccountsLogger interface {
	LogAccounts(data []byte) error
}

// accounts is the Frontend's view of the accounts: the last serialised
// state logged or loaded (for checkpoints) and a version that changes with
// every account change (privilege caches key on it).
type accounts struct {
	mu      sync.Mutex
	last    []byte
	version atomic.Uint64
	logger  atomic.Pointer[AccountsLogger] // set with the DDL logger
}

// accountsPersister is go-mysql-server's persister for this server.
type accountsPersister struct{ fe *Frontend }

var _ mysql_db.MySQLDbPersistence = accountsPersister{}

// Persist logs the accounts. It runs while go-mysql-server holds the
// accounts' editor, so account changes are logged one at a time, in the
// order they happen. It must not take the DDL latch: a checkpoint holds
// that while its catalog queries read the accounts (privilege checks), so
// waiting for it while holding the editor deadlocks. A checkpoint's
// accounts frame may therefore be newer than its position; recovery
// replays the accounts records after that position too, and the last one
// wins, so the result is the same.
func (p accountsPersister) Persist(_ *sql.Context, data []byte) error {
	fe := p.fe
	if l := fe.acct.logger.Load(); l != nil {
		if err := (*l).LogAccounts(data); err != nil {
			return err
		}
	}
	fe.acct.set(bytes.Clone(data)) // go-mysql-server's buffer
	return nil
}

// set makes data, which the caller hands over, the last accounts.
func (a *accounts) set(data []byte) {
	a.mu.Lock()
	a.last = data
	a.version.Add(1)
	a.mu.Unlock()
}

// Accounts returns the accounts as last logged or loaded (nil if no
// account statement has run on this data directory), for checkpoints.
func (fe *Frontend) Accounts() []byte {
	fe.acct.mu.Lock()
	defer fe.acct.mu.Unlock()
	return fe.acct.last
}

// LoadAccounts replaces the accounts with data (an accounts record's or a
// checkpoint's), then makes sure the initial account exists.
func (fe *Frontend) LoadAccounts(data []byte) error {
	data = bytes.Clone(data) // the caller's buffer may be reused
	ctx := fe.NewLocalContext(context.Background())
	mdb := fe.Engine.Analyzer.Catalog.MySQLDb
	ed := mdb.Editor()
	err := mdb.OverwriteUsersAndGrantData(ctx, ed, data)
	ed.Close()
	if err != nil {
		return fmt.Errorf("loading the accounts: %w", err)
	}
	fe.acct.set(data)
	fe.ensureInitialAccount()
	return nil
}

// ensureInitialAccount creates the initial account (Options.User and
// Password, any host, every privilege) if it does not exist.
func (fe *Frontend) ensureInitialAccount() {
	mdb := fe.Engine.Analyzer.Catalog.MySQLDb
	ed := mdb.Editor()
	mdb.AddSuperUser(ed, fe.user, "%", fe.password)
	ed.Close()
}

// fastAllowed reports whether the session's account may run plan p, which
// reads or writes p's table: the fast path runs a statement only then and
// leaves every other case to go-mysql-server, which checks privileges and
// gives MySQL's error. The answer is kept on the plan (plans belong to one
// session) until the accounts change.
func (s *Session) fastAllowed(ctx *sql.Context, p *fastPlan) bool {
	v := s.fe.acct.version.Load()
	if p.privChecked && p.privVersion == v {
		return p.privOK
	}
	privs := []sql.PrivilegeType{sql.PrivilegeType_Select}
	if p.write != nil {
		switch p.write.kind {
		case writeUpdate:
			privs = append(privs, sql.PrivilegeType_Update)
		case writeDelete:
			privs = append(privs, sql.PrivilegeType_Delete)
		case writeInsert:
			privs = []sql.PrivilegeType{sql.PrivilegeType_Insert}
		}
	}
	if p.lock.mode != 0 {
		privs = append(privs, sql.PrivilegeType_Update)
	}
	mdb := s.fe.Engine.Analyzer.Catalog.MySQLDb
	ok := mdb.UserHasPrivileges(ctx, sql.NewPrivilegedOperation(
		sql.PrivilegeCheckSubject{Database: p.dbKey, Table: p.tableKey}, privs...))
	if j := p.join; ok && j != nil {
		ok = mdb.UserHasPrivileges(ctx, sql.NewPrivilegedOperation(
			sql.PrivilegeCheckSubject{Database: j.inner.dbKey, Table: j.inner.tableKey}, privs...))
	}
	p.privChecked, p.privVersion, p.privOK = true, v, ok
	return ok
}
