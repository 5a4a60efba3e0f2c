package sqlfront

import (
	"context"
	"testing"
	"time"
)

// RetryAfterDDL's wait (waitDDLEnded) is woken by the end of the DDL it
// waits for, not by polling: the waiter parks on ddlEndCh, endedDDL
// closes it; the wait also ends with the context or the timeout.
func TestWaitDDLEndedWakes(t *testing.T) {
	fe := &Frontend{}
	fe.ddlGranted.Add(1) // one DDL running
	done := make(chan bool, 1)
	go func() { done <- fe.waitDDLEnded(context.Background(), 1, time.Minute) }()
	// The waiter parks on the channel.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		fe.ddlEndMu.Lock()
		parked := fe.ddlEndCh != nil
		fe.ddlEndMu.Unlock()
		if parked {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the waiter did not park on ddlEndCh")
		}
	}
	select {
	case <-done:
		t.Fatal("returned before the DDL ended")
	case <-time.After(20 * time.Millisecond):
	}
	fe.endedDDL()
	select {
	case ok := <-done:
		if !ok {
			t.Fatal("waitDDLEnded = false after the DDL ended")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("not woken by the DDL's end")
	}
	// Already ended: no wait. Not ended: the timeout, or the context.
	if !fe.waitDDLEnded(context.Background(), 1, time.Nanosecond) {
		t.Fatal("waited for a DDL that had ended")
	}
	if fe.waitDDLEnded(context.Background(), 2, 10*time.Millisecond) {
		t.Fatal("a DDL still running ended by timeout")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if fe.waitDDLEnded(ctx, 2, time.Minute) {
		t.Fatal("a cancelled wait reported the DDL ended")
	}
}
