package sqlfront

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
)

// Views under metadata locks (mdl.go). MySQL locks a view a statement
// reads (shared, to the end of the transaction), and the tables under it;
// CREATE OR REPLACE VIEW, ALTER VIEW and DROP VIEW take the view's
// exclusive lock, so they wait for the transactions that read it.
//
// go-mysql-server binds a view into a SubqueryAlias named as the view,
// without its database: the tables under it are in the plan (mdlPlan.walk
// reaches them), the view is not. So the catalog notes each view whose
// definition the statement looked up (Database.GetViewDefinition), mdlRule
// locks those names with the statement's tables, and plans the statement
// again if a view's definition changed before it got the lock
// (viewsChanged).

// viewSeen is a view definition a statement was planned with.
type viewSeen struct {
	db     *Database
	key    string // lower case
	create string // its CREATE VIEW text
}

// viewsChanged reports whether a view the statement read was dropped or
// redefined since.
func (s *Session) viewsChanged() bool {
	for _, v := range s.viewsSeen {
		v.db.mu.RLock()
		cur, ok := v.db.views[strings.ToLower(v.key)]
		v.db.mu.RUnlock()
		if !ok || cur.CreateViewStatement != v.create {
			return true
		}
	}
	return false
}

// A statement that read a view ended the session's transaction: binding
// the view's stored CREATE VIEW statement marked the statement as DDL
// (go-mysql-server's QFlagDDL), and DDL commits implicitly, so `BEGIN;
// INSERT ...; SELECT * FROM v; ROLLBACK` kept the insert, and the view's
// reader held no metadata lock after the SELECT. notDDL takes the mark
// back from a statement that is not DDL itself.
func (s *Session) notDDL(n sql.Node, qFlags *sql.QueryFlags) {
	if !s.viewBound || qFlags == nil || !qFlags.IsSet(sql.QFlagDDL) {
		return
	}
	if !plan.IsDDLNode(n) {
		qFlags.Unset(sql.QFlagDDL)
	}
}
