package sqlfront

import (
	"context"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
)

func TestRewritePassword(t *testing.T) {
	sess := sql.NewBaseSessionWithClientServer("", sql.Client{User: "app", Address: "%"}, 1)
	ctx := sql.NewContext(context.Background(), sql.WithSession(sess))
	for _, tc := range []struct{ in, want string }{
		{"SET PASSWORD FOR 'app'@'%' = 'pw'", "ALTER USER 'app'@'%' IDENTIFIED BY 'pw'"},
		{"set password for `app`@`%`='pw';", "ALTER USER `app`@`%` IDENTIFIED BY 'pw'"},
		{"SET PASSWORD FOR app = \"p'w\"", "ALTER USER app IDENTIFIED BY \"p'w\""},
		{"SET PASSWORD = 'it''s'", "ALTER USER 'app'@'%' IDENTIFIED BY 'it''s'"},
		{"SET PASSWORD = 'new' REPLACE 'old'", "ALTER USER 'app'@'%' IDENTIFIED BY 'new'"},
		{"SET PASSWORD = 'new' RETAIN CURRENT PASSWORD", "ALTER USER 'app'@'%' IDENTIFIED BY 'new' RETAIN CURRENT PASSWORD"},
		{"ALTER USER USER() IDENTIFIED BY 'pw'", "ALTER USER 'app'@'%' IDENTIFIED BY 'pw'"},
		{"alter user current_user ( ) identified by 'pw'", "alter user 'app'@'%' identified by 'pw'"},
		{"ALTER USER CURRENT_USER IDENTIFIED BY 'pw'", "ALTER USER 'app'@'%' IDENTIFIED BY 'pw'"},
		// Left alone.
		{"ALTER USER 'b'@'%' IDENTIFIED BY 'pw'", "ALTER USER 'b'@'%' IDENTIFIED BY 'pw'"},
		{"SET @password = 'x'", "SET @password = 'x'"},
		{"SELECT password FROM users", "SELECT password FROM users"},
		{"ALTER USER current_users IDENTIFIED BY 'x'", "ALTER USER current_users IDENTIFIED BY 'x'"},
	} {
		if got := rewritePassword(ctx, tc.in); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
	// Outside a session only the FOR form can be rewritten.
	if got := rewritePassword(context.Background(), "SET PASSWORD = 'x'"); got != "SET PASSWORD = 'x'" {
		t.Errorf("without a session: %s", got)
	}
}
