package server

import (
	"errors"
	"fmt"
	"net"
	"unicode/utf8"

	gmsserver "github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/vitess/go/mysql"

	"lockstep/internal/sqlfront"
)

// Authentication, around go-mysql-server's auth methods.
//
// Unknown users: go-mysql-server's auth methods each claim only the users
// that exist and use their plugin, so for a user that does not exist the
// protocol layer finds no method and answers 2012 "No authentication
// methods available". MySQL answers 1045 (Access denied), as for a wrong
// password, and says no more. authServer lets the first method
// (mysql_native_password) claim unknown users too: its password check then
// refuses them with 1045.
//
// Every method is wrapped in authMethod (below): TLS, MySQL's wording of
// 1045, the connection limits (connlimit.go) and the account a connection
// logged in as.

type authServer struct {
	mysql.AuthServer
	loggedIn func(c *mysql.Conn, user string)                   // a login succeeded; may be nil
	admit    func(c *mysql.Conn, user string, a net.Addr) error // may the login become a session? may be nil
}

func (a authServer) AuthMethods() []mysql.AuthMethod {
	ms := a.AuthServer.AuthMethods()
	if len(ms) == 0 {
		return ms
	}
	out := make([]mysql.AuthMethod, len(ms))
	for i, m := range ms {
		out[i] = authMethod{AuthMethod: m, loggedIn: a.loggedIn, admit: a.admit}
	}
	all := append([]mysql.AuthMethod(nil), out...)
	out[0] = unknownUsers{AuthMethod: all[0], all: all}
	return out
}

// authMethod is one of go-mysql-server's auth methods with what lockstep
// adds around it: it tells the protocol layer whether the connection is
// encrypted before any account check (TLS is ended below it, tlsterm.go,
// and every check starts with HandleUser), refuses a login in MySQL's
// words, refuses one beyond max_connections (connlimit.go's admit, which
// counts only logins that succeeded), and reports a login that succeeded
// (processlist.go).
type authMethod struct {
	mysql.AuthMethod
	loggedIn func(c *mysql.Conn, user string)
	admit    func(c *mysql.Conn, user string, a net.Addr) error
}

func (m authMethod) HandleUser(c *mysql.Conn, user string) bool {
	markTLS(c)
	return m.AuthMethod.HandleUser(c, user)
}

func (m authMethod) HandleAuthPluginData(c *mysql.Conn, user string, serverData, clientData []byte, addr net.Addr) (mysql.Getter, error) {
	g, err := m.AuthMethod.HandleAuthPluginData(c, user, serverData, clientData, addr)
	var se *mysql.SQLError
	if err != nil && errors.As(err, &se) && se.Num == mysql.ERAccessDeniedError {
		password := len(clientData) > 0 && !(len(clientData) == 1 && clientData[0] == 0)
		return nil, mysql.NewSQLError(mysql.ERAccessDeniedError, mysql.SSAccessDeniedError, "%s", accessDenied(user, addr, password))
	}
	if err == nil && m.admit != nil {
		if aerr := m.admit(c, user, addr); aerr != nil {
			return nil, aerr
		}
	}
	if err == nil && m.loggedIn != nil {
		m.loggedIn(c, user)
	}
	return g, err
}

// accessDenied is MySQL's 1045 message: the account as the server saw it
// (a loopback client is 'localhost', as MySQL resolves it; the name cut as
// MySQL reads it, userNameBytes) and whether a password was given.
func accessDenied(user string, addr net.Addr, password bool) string {
	host := sqlfront.ClientHost(addr)
	using := "NO"
	if password {
		using = "YES"
	}
	return fmt.Sprintf("Access denied for user '%s'@'%s' (using password: %s)", cutUserName(user), host, using)
}

// userNameBytes is MySQL's USERNAME_LENGTH: 32 characters of up to 3
// bytes. MySQL reads no more of the name a client sends (an account's
// name is at most 32 characters), so its 1045 echoes no more: a user name
// of a megabyte came back whole.
const userNameBytes = 32 * 3

// cutUserName is user cut to userNameBytes, at a character boundary.
func cutUserName(user string) string {
	if len(user) <= userNameBytes {
		return user
	}
	n := userNameBytes
	for n > 0 && !utf8.RuneStart(user[n]) {
		n--
	}
	return user[:n]
}

// unknownUsers is an auth method that also claims the users no method
// claims.
type unknownUsers struct {
	mysql.AuthMethod
	all []mysql.AuthMethod // the server's methods; all[0] is AuthMethod
}

func (u unknownUsers) HandleUser(c *mysql.Conn, user string) bool {
	for i, m := range u.all {
		if m.HandleUser(c, user) {
			return i == 0
		}
	}
	return true
}

// withUnknownUsers is the protocol listener factory that installs
// authServer; admit decides whether a successful login may become a
// session, and loggedIn hears of every one that does.
func withUnknownUsers(loggedIn func(c *mysql.Conn, user string), admit func(c *mysql.Conn, user string, a net.Addr) error) gmsserver.ProtocolListenerFunc {
	return func(cfg gmsserver.Config, lc mysql.ListenerConfig, sel gmsserver.ServerEventListener) (gmsserver.ProtocolListener, error) {
		lc.AuthServer = authServer{AuthServer: lc.AuthServer, loggedIn: loggedIn, admit: admit}
		return gmsserver.MySQLProtocolListenerFactory(cfg, lc, sel)
	}
}
