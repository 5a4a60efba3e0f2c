package server

import (
	"context"
	"testing"
	"time"
)

// TestProcessListUser: a connection made without a database shows its
// account in SHOW PROCESSLIST, to itself and to others, from its login on
// (go-mysql-server showed "unauthenticated user" until a USE); an idle one
// is in Command Sleep.
func TestProcessListUser(t *testing.T) {
	s := startInProcess(t, nil)
	s.exec(t, "CREATE USER 'app'@'%' IDENTIFIED BY 'pw'")
	ctx := context.Background()
	idle, err := s.openAs(t, "app", "pw").Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if err := idle.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	var idleID int64
	if err := idle.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&idleID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)

	root, err := s.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var rootID int64
	if err := root.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&rootID); err != nil {
		t.Fatal(err)
	}
	rows, err := root.QueryContext(ctx, "SHOW PROCESSLIST")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seen := map[int64][2]string{}
	for rows.Next() {
		var id int64
		var user, host, command, state string
		var db, info, tm any
		if err := rows.Scan(&id, &user, &host, &db, &command, &tm, &state, &info); err != nil {
			t.Fatal(err)
		}
		seen[id] = [2]string{user, command}
	}
	if got := seen[idleID]; got != [2]string{"app", "Sleep"} {
		t.Errorf("idle connection of app: %v, want app in Sleep", got)
	}
	if got := seen[rootID]; got[0] != "root" || got[1] != "Query" {
		t.Errorf("the connection asking: %v, want root in Query", got)
	}
}
