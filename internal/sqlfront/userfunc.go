package sqlfront

import (
	"net"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// USER(), SESSION_USER(), SYSTEM_USER(): the user name the client gave
// and the host it connected from, as MySQL reports them — not the account
// that matched (CURRENT_USER(), 'root'@'%'), which go-mysql-server's
// USER() returned. lockstep does not look host names up: a loopback
// address (or a Unix socket) is "localhost", what MySQL's lookup gives
// for it; any other is the address itself, what MySQL shows when the
// lookup finds no name. The mysql client's `status` and pt-mysql-summary
// show it.
//
// The provider answers these names (and LOAD_FILE, loadfile.go) before go-mysql-server's built-ins do
// (analyzer.Catalog.Function asks the database provider first).

// userFunctions are the names userFunc serves.
var userFunctions = map[string]bool{"user": true, "session_user": true, "system_user": true}

// Function implements sql.FunctionProvider for the names above.
func (p *provider) Function(_ *sql.Context, name string) (sql.Function, bool) {
	lower := strings.ToLower(name)
	if lower == "load_file" {
		return sql.Function1{Name: lower, Fn: newLoadFile}, true // loadfile.go
	}
	if _, ok := groupAdminFunctions[lower]; ok {
		return newGroupAdminFunc(lower), true // groupadmin.go
	}
	if lower == "wait_for_executed_gtid_set" {
		return sql.FunctionN{Name: lower, Fn: newWaitGTIDs}, true // gtidwait.go
	}
	if f, ok := limitedFunctions[lower]; ok {
		return f, true // packetlimit.go
	}
	if !userFunctions[lower] {
		return nil, false
	}
	return sql.Function0{Name: lower, Fn: func() sql.Expression {
		return &userFunc{NoArgFunc: function.NoArgFunc{Name: lower, SQLType: types.LongText}}
	}}, true
}

type userFunc struct {
	function.NoArgFunc
}

var _ sql.FunctionExpression = (*userFunc)(nil)

func (u *userFunc) IsNonDeterministic() bool { return true }
func (u *userFunc) Description() string {
	return "returns the user name and host name the client connected with."
}

func (u *userFunc) CollationCoercibility(*sql.Context) (sql.CollationID, byte) {
	return sql.Collation_utf8mb3_general_ci, 3
}

func (u *userFunc) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	return function.NoArgFuncWithChildren(u, children)
}

func (u *userFunc) Eval(ctx *sql.Context, _ sql.Row) (interface{}, error) {
	c := ctx.Client()
	host := sessionHost(ctx)
	if c.User == "" && host == "" {
		return "", nil
	}
	return c.User + "@" + host, nil
}

// sessionHost is the host MySQL names ctx's client by (ClientHost of its
// connection), its address for a session without one.
func sessionHost(ctx *sql.Context) string {
	if s, ok := ctx.Session.(*Session); ok && s.clientHost != "" {
		return s.clientHost
	}
	return ctx.Session.Client().Address
}

// ClientHost is the host MySQL names a client at addr by, in USER() and
// in the 1045 message: "localhost" for a loopback or non-TCP (Unix
// socket) client, else its IP address.
func ClientHost(addr net.Addr) string {
	if tcp, ok := addr.(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		return tcp.IP.String()
	}
	return "localhost"
}
