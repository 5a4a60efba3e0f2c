package sqlfront

import "testing"

// TestAutoIncStateInsertID follows MySQL's rule for the OK packet's insert
// id (insertid.go) through the events one statement produces.
func TestAutoIncStateInsertID(t *testing.T) {
	type event struct {
		gen      uint64      // a value generated (0: none)
		row      interface{} // then a row written with this AUTO_INCREMENT value (nil: none)
		inserted bool
	}
	for _, tc := range []struct {
		name     string
		events   []event
		affected uint64
		want     uint64
	}{
		{"nothing written", nil, 0, 0},
		{"one generated", []event{{gen: 7, row: int32(7), inserted: true}}, 1, 7},
		{"first generated of several", []event{{gen: 7, row: int32(7), inserted: true}, {gen: 8, row: int32(8), inserted: true}}, 2, 7},
		{"explicit ids: the last", []event{{row: int64(5), inserted: true}, {row: int64(9), inserted: true}}, 2, 9},
		{"explicit then generated: the generated", []event{{row: int64(100), inserted: true}, {gen: 101, row: int64(101), inserted: true}}, 2, 101},
		{"generated but ignored (duplicate), then generated and inserted", []event{{gen: 11}, {gen: 12, row: uint64(12), inserted: true}}, 1, 12},
		{"update of an existing row", []event{{row: int32(1)}}, 2, 1},
		{"update that changed nothing", []event{{row: int32(1)}}, 0, 0},
		{"insert with generated value then update", []event{{gen: 4, row: int32(4), inserted: true}, {row: int32(2)}}, 3, 4},
		{"an update's value is never a generated one", []event{{gen: 3}, {row: int32(3)}}, 2, 3},
		{"negative explicit id: its 64-bit pattern", []event{{row: int8(-1), inserted: true}}, 1, 1<<64 - 1},
		{"non-integer value ignored", []event{{row: "x", inserted: true}}, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a autoIncState
			for _, e := range tc.events {
				if e.gen != 0 {
					a.noteGenerated(e.gen)
				}
				if e.row != nil {
					a.noteRow(e.row, e.inserted)
				}
			}
			if got := a.insertID(tc.affected); got != tc.want {
				t.Fatalf("insert id %d, want %d", got, tc.want)
			}
		})
	}
}
