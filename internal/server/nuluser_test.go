package server

import (
	"errors"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestUserNameWithNUL: a NUL byte inside the user name of a handshake
// response. The name is a NUL-terminated string in the packet, so MySQL 8
// (parse_client_handshake_packet, sql/auth/sql_authentication.cc) ends
// the name at the first NUL and reads the bytes after it as the rest of
// the packet: the auth response, the database, the plugin name. When they
// do not read as one (a driver that sends the name's bytes as they are,
// then its own NUL and the auth response), the parse fails and MySQL
// answers 1043 (08S01) "Bad handshake"; when they do, the login goes on
// as the cut name and is refused as any: 1045 naming it.
func TestUserNameWithNUL(t *testing.T) {
	s := startInProcess(t, nil)
	s.exec(t, "CREATE USER 'app'@'%' IDENTIFIED BY 's3cret'")

	// go-sql-driver sends "app\x00x", its NUL, then the auth response's
	// length: MySQL reads "app", then an auth response of 'x' (120)
	// bytes, more than the packet holds.
	err := s.openAs(t, "app\x00x", "s3cret").Ping()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1043 || string(me.SQLState[:]) != "08S01" || me.Message != "Bad handshake" {
		t.Errorf("go-sql-driver as app\\x00x: %v, want 1043 (08S01) Bad handshake", err)
	}

	for _, tc := range []struct {
		user  string
		num   uint16
		state string
		msg   string
	}{
		{"app\x00x", 1043, "08S01", "Bad handshake"},
		// After "app" and its NUL: an empty auth response (0), then the
		// plugin name; what follows is not read.
		{"app\x00\x00mysql_native_password", 1045, "28000", "Access denied for user 'app'@'localhost' (using password: NO)"},
		{"nobody\x00\x00mysql_native_password", 1045, "28000", "Access denied for user 'nobody'@'localhost' (using password: NO)"},
	} {
		c, err := dialRaw(s.addr)
		if err != nil {
			t.Fatal(err)
		}
		err = c.login(tc.user)
		c.Close()
		var re *rawError
		if !errors.As(err, &re) || re.num != tc.num || re.state != tc.state || re.msg != tc.msg {
			t.Errorf("raw login as %q: %v, want ERROR %d (%s): %s", tc.user, err, tc.num, tc.state, tc.msg)
		}
	}
}
