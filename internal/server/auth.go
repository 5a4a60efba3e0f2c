package server

import (
	gmsserver "github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/vitess/go/mysql"
)

// Authentication of unknown users.
//
// go-mysql-server's auth methods each claim only the users that exist and
// use their plugin, so for a user that does not exist the protocol layer
// finds no method and answers 2012 "No authentication methods available".
// MySQL answers 1045 (Access denied), as for a wrong password, and says no
// more. authServer lets the first method (mysql_native_password) claim
// unknown users too: its password check then refuses them with 1045.

type authServer struct {
	mysql.AuthServer
}

func (a authServer) AuthMethods() []mysql.AuthMethod {
	ms := a.AuthServer.AuthMethods()
	if len(ms) == 0 {
		return ms
	}
	out := append([]mysql.AuthMethod(nil), ms...)
	out[0] = unknownUsers{AuthMethod: ms[0], all: ms}
	return out
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
// authServer.
func withUnknownUsers() gmsserver.ProtocolListenerFunc {
	return func(cfg gmsserver.Config, lc mysql.ListenerConfig, sel gmsserver.ServerEventListener) (gmsserver.ProtocolListener, error) {
		lc.AuthServer = authServer{AuthServer: lc.AuthServer}
		return gmsserver.MySQLProtocolListenerFactory(cfg, lc, sel)
	}
}
