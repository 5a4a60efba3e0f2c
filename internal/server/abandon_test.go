package server

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// TestAbandonedThenNext: a long statement KILL QUERY abandons while it is
// planned (1317 at once) leaves nothing behind for the connection's next
// statement, even when the abandoned statement's goroutine is slow to
// finish after handing over its result (the hook holds it there for
// 300 ms). Before, the session let go of the statement's planning state
// only when that goroutine returned: a next statement that ran in between
// found the abandoned state and failed with 1317 too (seen in CI under
// load as TestKillLongStatements' "victim: SELECT 1: Error 1317").
func TestAbandonedThenNext(t *testing.T) {
	hold := func() { time.Sleep(300 * time.Millisecond) }
	testAfterStoppable.Store(&hold)
	t.Cleanup(func() { testAfterStoppable.Store(nil) })
	s := startInProcess(t, nil)
	ctx := context.Background()
	victim, err := s.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()
	var id int64
	if err := victim.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	// A UNION chain of 20,000 SELECTs: seconds of planning.
	var b strings.Builder
	for i := 0; i < 20000; i++ {
		if i > 0 {
			b.WriteString(" UNION ALL ")
		}
		b.WriteString("SELECT " + strconv.Itoa(i))
	}
	done := make(chan error, 1)
	go func() {
		rows, err := victim.QueryContext(ctx, b.String())
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		done <- err
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var n int
		if err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ? AND COMMAND = 'Query'", id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the statement never showed in the process list")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	if _, err := s.db.ExecContext(ctx, "KILL QUERY "+strconv.FormatInt(id, 10)); err != nil {
		t.Fatalf("KILL QUERY: %v", err)
	}
	var me *mysql.MySQLError
	if err := <-done; !errors.As(err, &me) || me.Number != 1317 {
		t.Fatalf("the killed statement: %v, want 1317", err)
	}
	var one int
	if err := victim.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("the next statement: %d, %v; want 1", one, err)
	}
}
