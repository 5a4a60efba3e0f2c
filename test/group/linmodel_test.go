package group

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// The sequential specification the linearizability test checks histories
// against (porcupine): one register per key of lin.kv, holding an integer
// (0 at the start), with read, write and compare-and-set. Every write and
// every CAS writes a value no other operation writes, so a read names the
// one operation whose value it saw.

type kvOp uint8

const (
	opRead kvOp = iota
	opWrite
	opCAS
)

type kvInput struct {
	op     kvOp
	key    int
	val    int64 // write, CAS: the new value
	expect int64 // CAS: the value it replaces
	member int   // the member the statement went to (for the visualization)
}

type kvOutput struct {
	val     int64 // read: the value seen
	ok      bool  // CAS: a row was changed
	unknown bool  // write, CAS: no answer (outcome unknown)
}

// pendingReturn is the return time of an operation whose outcome is
// unknown: it may take effect at any point after its call, or never
// (linearized after everything else, which is the same as never).
const pendingReturn = math.MaxInt64

var kvModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[int][]porcupine.Operation{}
		for _, op := range h {
			k := op.Input.(kvInput).key
			byKey[k] = append(byKey[k], op)
		}
		keys := slices.Sorted(func(yield func(int) bool) {
			for k := range byKey {
				if !yield(k) {
					return
				}
			}
		})
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() any { return int64(0) },
	Step: func(state, input, output any) (bool, any) {
		st, in, out := state.(int64), input.(kvInput), output.(kvOutput)
		switch in.op {
		case opRead:
			return out.val == st, st
		case opWrite:
			return true, in.val
		default: // opCAS
			matched := st == in.expect
			if out.unknown {
				if matched {
					return true, in.val
				}
				return true, st
			}
			if out.ok != matched {
				return false, st
			}
			if matched {
				return true, in.val
			}
			return true, st
		}
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(kvInput), output.(kvOutput)
		var s string
		switch in.op {
		case opRead:
			s = fmt.Sprintf("read(k%d) -> %d", in.key, out.val)
		case opWrite:
			s = fmt.Sprintf("write(k%d, %d)", in.key, in.val)
		default:
			s = fmt.Sprintf("cas(k%d, %d -> %d) -> %v", in.key, in.expect, in.val, out.ok)
		}
		if out.unknown {
			s += " ?unknown"
		}
		return fmt.Sprintf("%s @m%d", s, in.member)
	},
	DescribeState: func(state any) string { return fmt.Sprint(state.(int64)) },
}

// history records operations from many clients.
type history struct {
	start time.Time
	mu    sync.Mutex
	ops   []porcupine.Operation
}

func newHistory() *history { return &history{start: time.Now()} }

// now is the history's clock (monotonic nanoseconds since its start).
func (h *history) now() int64 { return int64(time.Since(h.start)) }

func (h *history) add(client int, in kvInput, out kvOutput, call, ret int64) {
	h.mu.Lock()
	h.ops = append(h.ops, porcupine.Operation{ClientId: client, Input: in, Output: out, Call: call, Return: ret})
	h.mu.Unlock()
}

func (h *history) snapshot() []porcupine.Operation {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.ops)
}

// checkLinearizable fails t unless ops is linearizable, writing
// porcupine's visualization of the failing key to a file named in the
// failure; what names the history.
func checkLinearizable(t *testing.T, what string, ops []porcupine.Operation, timeout time.Duration) {
	t.Helper()
	res, info := porcupine.CheckOperationsVerbose(kvModel, ops, timeout)
	switch res {
	case porcupine.Ok:
		return
	case porcupine.Unknown:
		t.Fatalf("%s: the linearizability check of %d operations did not finish within %v", what, len(ops), timeout)
	}
	path := filepath.Join(os.TempDir(), fmt.Sprintf("lockstep-linearizability-%d.html", time.Now().UnixNano()))
	if err := porcupine.VisualizePath(kvModel, info, path); err != nil {
		t.Fatalf("%s: the history of %d operations is not linearizable (the visualization could not be written: %v)", what, len(ops), err)
	}
	t.Fatalf("%s: the history of %d operations is not linearizable; porcupine's visualization: %s", what, len(ops), path)
}

// isLinearizable is the check without a verdict on t (the checker's own
// tests).
func isLinearizable(ops []porcupine.Operation) bool {
	return porcupine.CheckOperationsTimeout(kvModel, ops, 10*time.Second) == porcupine.Ok
}

// TestKVModel: the model accepts what a linearizable register does and
// refuses a stale read and a CAS result that contradicts the state; an
// operation of unknown outcome may have taken effect (its value is read
// later) or not (its value is never seen), but a write refused for
// certain (left out of the history) whose value is read is caught.
func TestKVModel(t *testing.T) {
	w := func(c int, v, call, ret int64) porcupine.Operation {
		return porcupine.Operation{ClientId: c, Input: kvInput{op: opWrite, key: 1, val: v}, Output: kvOutput{}, Call: call, Return: ret}
	}
	wu := func(c int, v, call int64) porcupine.Operation {
		return porcupine.Operation{ClientId: c, Input: kvInput{op: opWrite, key: 1, val: v}, Output: kvOutput{unknown: true}, Call: call, Return: pendingReturn}
	}
	r := func(c int, v, call, ret int64) porcupine.Operation {
		return porcupine.Operation{ClientId: c, Input: kvInput{op: opRead, key: 1}, Output: kvOutput{val: v}, Call: call, Return: ret}
	}
	cas := func(c int, from, to int64, ok bool, call, ret int64) porcupine.Operation {
		return porcupine.Operation{ClientId: c, Input: kvInput{op: opCAS, key: 1, val: to, expect: from}, Output: kvOutput{ok: ok}, Call: call, Return: ret}
	}
	for _, tc := range []struct {
		name string
		h    []porcupine.Operation
		want bool
	}{
		{"sequential", []porcupine.Operation{w(0, 1, 0, 1), r(1, 1, 2, 3), cas(0, 1, 2, true, 4, 5), r(1, 2, 6, 7), cas(0, 1, 3, false, 8, 9)}, true},
		{"concurrent read sees either", []porcupine.Operation{w(0, 1, 0, 1), w(0, 2, 2, 10), r(1, 1, 3, 4), r(1, 2, 5, 6)}, true},
		{"stale read", []porcupine.Operation{w(0, 1, 0, 1), w(0, 2, 2, 3), r(1, 1, 4, 5)}, false},
		{"CAS succeeds on the wrong value", []porcupine.Operation{w(0, 1, 0, 1), cas(1, 0, 5, true, 2, 3)}, false},
		{"CAS fails on the right value", []porcupine.Operation{w(0, 1, 0, 1), cas(1, 1, 5, false, 2, 3)}, false},
		{"unknown write seen later", []porcupine.Operation{wu(0, 7, 0), r(1, 0, 1, 2), r(1, 7, 3, 4), r(2, 7, 5, 6)}, true},
		{"unknown write never seen", []porcupine.Operation{wu(0, 7, 0), w(1, 8, 1, 2), r(1, 8, 3, 4)}, true},
		{"unknown write seen, then unseen", []porcupine.Operation{wu(0, 7, 0), r(1, 7, 1, 2), r(1, 0, 3, 4)}, false},
		{"refused write seen", []porcupine.Operation{w(0, 1, 0, 1), r(1, 9, 2, 3)}, false},
		{"unknown CAS took effect", []porcupine.Operation{w(0, 1, 0, 1),
			{ClientId: 1, Input: kvInput{op: opCAS, key: 1, val: 4, expect: 1}, Output: kvOutput{unknown: true}, Call: 2, Return: pendingReturn},
			r(2, 4, 3, 4)}, true},
	} {
		if got := isLinearizable(tc.h); got != tc.want {
			t.Errorf("%s: linearizable %v, want %v", tc.name, got, tc.want)
		}
	}
}
