package sqlfront

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
)

// Group administration functions, in the style of MySQL Group
// Replication's UDFs (which need SUPER or GROUP_REPLICATION_ADMIN and
// answer with a message, or fail with 3910):
//
//	SELECT group_replication_set_as_primary('2')       -- MySQL's, by member id
//	SELECT group_replication_add_member(4, 'host:port') -- lockstep's
//	SELECT group_replication_remove_member(4)          -- lockstep's
//
// MySQL adds a member by starting group replication on it; a raft group's
// primary proposes the change, so lockstep has functions for it.

// GroupAdmin performs the functions (a group member's server).
type GroupAdmin interface {
	AddMember(id uint64, addr string) error
	RemoveMember(id uint64) error
	SetPrimary(id uint64) error
}

type groupAdminHolder = atomic.Pointer[GroupAdmin]

// SetGroupAdmin installs the member's administration (nil standalone).
func (fe *Frontend) SetGroupAdmin(a GroupAdmin) { fe.groupAdmin.Store(&a) }

var groupAdminFunctions = map[string]int{
	"group_replication_set_as_primary": 1,
	"group_replication_add_member":     2,
	"group_replication_remove_member":  1,
}

func newGroupAdminFunc(name string) sql.Function {
	return sql.FunctionN{Name: name, Fn: func(args ...sql.Expression) (sql.Expression, error) {
		if want := groupAdminFunctions[name]; len(args) != want && !(name == "group_replication_set_as_primary" && len(args) == 2) {
			return nil, sql.ErrInvalidArgumentNumber.New(name, want, len(args))
		}
		return &groupAdminFunc{name: name, args: args}, nil
	}}
}

type groupAdminFunc struct {
	name string
	args []sql.Expression
}

var _ sql.FunctionExpression = (*groupAdminFunc)(nil)

func (f *groupAdminFunc) FunctionName() string { return f.name }
func (f *groupAdminFunc) Description() string  { return "changes the replication group." }
func (f *groupAdminFunc) Resolved() bool {
	for _, a := range f.args {
		if !a.Resolved() {
			return false
		}
	}
	return true
}
func (f *groupAdminFunc) String() string {
	parts := make([]string, len(f.args))
	for i, a := range f.args {
		parts[i] = a.String()
	}
	return f.name + "(" + strings.Join(parts, ", ") + ")"
}
func (f *groupAdminFunc) Type() sql.Type             { return types.LongText }
func (f *groupAdminFunc) IsNullable() bool           { return false }
func (f *groupAdminFunc) Children() []sql.Expression { return f.args }
func (f *groupAdminFunc) IsNonDeterministic() bool   { return true }
func (f *groupAdminFunc) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	return newGroupAdminFunc(f.name).NewInstance(c)
}

func udfError(name, format string, args ...any) error {
	return mysql.NewSQLError(3910, "HY000", "The function '%s' failed. %s", name, fmt.Sprintf(format, args...))
}

func (f *groupAdminFunc) Eval(ctx *sql.Context, row sql.Row) (interface{}, error) {
	fe := frontendOf(ctx)
	if fe == nil || !fe.hasAnyPriv(ctx, sql.PrivilegeType_Super, "group_replication_admin") {
		return nil, mysql.NewSQLError(mysql.ERSpecifiedAccessDenied, "42000",
			"Access denied; you need (at least one of) the SUPER or GROUP_REPLICATION_ADMIN privilege(s) for this operation")
	}
	var admin GroupAdmin
	if p := fe.groupAdmin.Load(); p != nil {
		admin = *p
	}
	if admin == nil {
		return nil, udfError(f.name, "Member must be ONLINE and in the majority partition.")
	}
	vals := make([]string, len(f.args))
	for i, a := range f.args {
		v, err := a.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, udfError(f.name, "Wrong arguments: the arguments must not be NULL.")
		}
		s, _, err := types.LongText.Convert(ctx, v)
		if err != nil {
			return nil, udfError(f.name, "Wrong arguments.")
		}
		vals[i] = strings.TrimSpace(s.(string))
	}
	id, err := strconv.ParseUint(vals[0], 10, 32)
	if err != nil || id == 0 {
		return nil, udfError(f.name, "Wrong arguments: %q is not a member id.", vals[0])
	}
	switch f.name {
	case "group_replication_set_as_primary":
		if err := admin.SetPrimary(id); err != nil {
			return nil, udfError(f.name, "%v", err)
		}
		return fmt.Sprintf("Primary server switched to: %d", id), nil
	case "group_replication_add_member":
		if err := admin.AddMember(id, vals[1]); err != nil {
			return nil, udfError(f.name, "%v", err)
		}
		return fmt.Sprintf("Member %d added to the group as a learner; it votes once it has caught up.", id), nil
	default:
		if err := admin.RemoveMember(id); err != nil {
			return nil, udfError(f.name, "%v", err)
		}
		return fmt.Sprintf("Member %d removed from the group.", id), nil
	}
}
