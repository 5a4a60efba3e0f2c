package server

import (
	gosql "database/sql"
	"os"
	"testing"
)

// TestClientIdentity: USER(), SESSION_USER() and SYSTEM_USER() name the
// host the client came from ('root@%', the account, before), CURRENT_USER()
// the account; @@hostname and @@version_compile_os/_machine are the
// machine's (empty before).
func TestClientIdentity(t *testing.T) {
	s := startInProcess(t, nil)
	host, _ := os.Hostname()
	for q, want := range map[string]string{
		"SELECT USER()":                          "root@localhost", // the test connects to 127.0.0.1
		"SELECT SESSION_USER()":                  "root@localhost",
		"SELECT system_user()":                   "root@localhost",
		"SELECT CURRENT_USER()":                  "root@%",
		"SELECT @@hostname":                      host,
		"SELECT @@version_compile_os <> ''":      "1",
		"SELECT @@version_compile_machine <> ''": "1",
	} {
		if got := s.str(t, q); got != want {
			t.Errorf("%s = %q, want %q", q, got, want)
		}
	}
	s.exec(t, "CREATE USER 'app'@'%' IDENTIFIED BY 'pw'")
	app, err := gosql.Open("mysql", "app:pw@tcp("+s.addr+")/")
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	if got := queryString(t, app, "SELECT CONCAT(USER(), ' ', CURRENT_USER())"); got != "app@localhost app@%" {
		t.Errorf("app: USER() CURRENT_USER() = %q", got)
	}
}
