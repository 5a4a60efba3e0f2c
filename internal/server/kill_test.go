package server

import (
	"context"
	gosql "database/sql"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// TestKill: KILL takes an expression for its id (the parser took a number
// only: pt-kill's driver quotes it), an id no connection has is 1094 (it
// was OK), and a statement KILL QUERY stops ends with 1317 (was 1105
// "context canceled").
func TestKill(t *testing.T) {
	s := startInProcess(t, nil)
	ctx := context.Background()
	errNum := func(err error) uint16 {
		var me *mysql.MySQLError
		if errors.As(err, &me) {
			return me.Number
		}
		return 0
	}
	for _, q := range []string{"KILL 999", "KILL QUERY '999'", "kill connection 998 + 1", "KILL 'abc'"} {
		if _, err := s.db.ExecContext(ctx, q); errNum(err) != 1094 {
			t.Errorf("%s: %v, want 1094", q, err)
		}
	}

	victim, err := s.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()
	var id int64
	if err := victim.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		var v gosql.NullInt64
		done <- victim.QueryRowContext(ctx, "SELECT SLEEP(20)").Scan(&v)
	}()
	time.Sleep(300 * time.Millisecond)
	if _, err := s.db.ExecContext(ctx, "KILL QUERY '"+strconv.FormatInt(id, 10)+"'"); err != nil {
		t.Fatalf("KILL QUERY: %v", err)
	}
	select {
	case err := <-done:
		if errNum(err) != 1317 {
			t.Errorf("the killed statement: %v, want 1317 Query execution was interrupted", err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("the killed statement ran %v", d)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("KILL QUERY did not stop SELECT SLEEP(20)")
	}
	// The connection lives on after KILL QUERY, and KILL ends it.
	if err := victim.PingContext(ctx); err != nil {
		t.Fatalf("after KILL QUERY: %v", err)
	}
	if _, err := s.db.ExecContext(ctx, "KILL "+strconv.FormatInt(id, 10)); err != nil {
		t.Fatalf("KILL: %v", err)
	}
	time.Sleep(200 * time.Millisecond)
	if _, err := victim.ExecContext(ctx, "SELECT 1"); err == nil {
		t.Error("the killed connection still answers")
	}
}
