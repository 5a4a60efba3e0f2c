package checkpoint

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteback: with a threshold, the file goes to disk in consecutive
// chunks of at least the threshold, each started once and finished once,
// the previous chunk finished only after the next was started (at most two
// in flight) and none finished before it was started; the file holds what
// was written. Without one nothing is started before the final fsync.
func TestWriteback(t *testing.T) {
	for _, tc := range []struct {
		threshold int64
		writes    []int
	}{
		{0, []int{100, 5000, 70000}},
		{4096, []int{100, 5000, 70000, 1, 4095, 4096, 10}},
		{4096, []int{4096, 4096, 4096}},
		{1 << 20, []int{1 << 19, 1 << 19, 1 << 19, 100}},
	} {
		t.Run(fmt.Sprintf("%d/%v", tc.threshold, tc.writes), func(t *testing.T) {
			f, err := os.Create(filepath.Join(t.TempDir(), "f"))
			must(t, err)
			defer f.Close()
			type call struct {
				finish bool
				off, n int64
			}
			var calls []call
			wb := newWriteback(f, tc.threshold)
			wb.start = func(_ *os.File, off, n int64) error { calls = append(calls, call{false, off, n}); return nil }
			wb.finish = func(_ *os.File, off, n int64) error { calls = append(calls, call{true, off, n}); return nil }
			var want []byte
			for i, n := range tc.writes {
				p := bytes.Repeat([]byte{byte('a' + i)}, n)
				want = append(want, p...)
				if _, err := wb.Write(p); err != nil {
					t.Fatal(err)
				}
			}
			got, err := os.ReadFile(f.Name())
			must(t, err)
			if !bytes.Equal(got, want) || wb.off != int64(len(want)) {
				t.Fatalf("file holds %d bytes (offset %d), want the %d written", len(got), wb.off, len(want))
			}
			if tc.threshold == 0 {
				if len(calls) != 0 || wb.chunks != 0 {
					t.Fatalf("writeback without a threshold: %v", calls)
				}
				return
			}
			var next int64 // the next chunk starts here
			started := map[int64]int64{}
			for i, c := range calls {
				if !c.finish {
					if c.off != next || c.n < tc.threshold {
						t.Fatalf("call %d: chunk [%d,+%d) started; want one at %d of at least %d (%v)", i, c.off, c.n, next, tc.threshold, calls)
					}
					started[c.off] = c.n
					next = c.off + c.n
					continue
				}
				if n, ok := started[c.off]; !ok || n != c.n {
					t.Fatalf("call %d: [%d,+%d) finished but not started as such (%v)", i, c.off, c.n, calls)
				}
				delete(started, c.off)
				if len(started) != 1 || i == 0 || calls[i-1].finish {
					t.Fatalf("call %d: a chunk finished other than right after the next one started (%v)", i, calls)
				}
			}
			if int64(len(started)) != min(wb.chunks, 1) || next != wb.started {
				t.Fatalf("%d chunks, %d left in flight, started up to %d of %d (%v)", wb.chunks, len(started), next, wb.off, calls)
			}
			if wb.off-wb.started >= tc.threshold {
				t.Fatalf("%d bytes past the last chunk, threshold %d", wb.off-wb.started, tc.threshold)
			}
		})
	}
}
