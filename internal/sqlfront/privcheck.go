package sqlfront

import (
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
)

// RequirePrivilege is MySQL's check for a statement that needs the static
// privilege priv on *.* (named name in the error): nil if connection
// connID's account has it, else 1227.
func (fe *Frontend) RequirePrivilege(connID uint32, priv sql.PrivilegeType, name string) error {
	s := fe.session(connID)
	if s == nil {
		return fmt.Errorf("privilege check: no session for connection %d", connID)
	}
	if fe.hasAnyPriv(s.fastContext(), priv) {
		return nil
	}
	return errNeedPrivileges(name)
}

// RequireProcess is MySQL's check for statements that need the PROCESS
// privilege on *.* (SHOW ENGINE ... STATUS, MUTEX, LOGS): nil if
// connection connID's account has it, else MySQL's 1227.
func (fe *Frontend) RequireProcess(connID uint32) error {
	return fe.RequirePrivilege(connID, sql.PrivilegeType_Process, "PROCESS")
}
