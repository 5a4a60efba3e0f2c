package certify

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

func batchWith(s *Static, first int64, writesets [][]uint64, out []int64, la int) {
	ahead := 0
	for i, ws := range writesets {
		for ; ahead < len(writesets) && ahead <= i+la; ahead++ {
			s.touch(writesets[ahead])
		}
		out[i] = s.certify(first+int64(i), ws)
	}
}

var abBuckets = 1 << 16
var abSpace uint64 = 10_000_000

func TestZZABSmall(t *testing.T) {
	abSpace = 2000
	TestZZAB(t)
	abSpace = 10_000_000
}

func TestZZAB(t *testing.T) {
	c := mustStatic(t, Config{Buckets: abBuckets})
	r := rand.New(rand.NewPCG(1, 42))
	w := newSysbench(r, abSpace)
	seq := prefill(c, 2_000_000, func(i uint64) uint64 { return rowKey(0, i) })
	const nt = 1 << 16
	wss := make([][]uint64, nt)
	keys := 0
	for i := range wss {
		wss[i] = w.next(nil)
		keys += len(wss[i])
	}
	out := make([]int64, 64)
	variants := []string{"call", "la1"}
	best := map[string]float64{}
	for round := 0; round < 8; round++ {
		for _, v := range variants {
			t0 := time.Now()
			for rep := 0; rep < 4; rep++ {
				if v == "call" {
					for _, ws := range wss {
						seq++
						c.Certify(seq, ws)
					}
					continue
				}
				la := map[string]int{"la0": 0, "la1": 1, "la2": 2, "la4": 4, "la8": 8}[v]
				for i := 0; i < nt; i += 64 {
					batchWith(c, seq+1, wss[i:i+64], out, la)
					seq += 64
				}
			}
			d := float64(time.Since(t0).Nanoseconds()) / float64(4*keys)
			if best[v] == 0 || d < best[v] {
				best[v] = d
			}
		}
	}
	for _, v := range variants {
		fmt.Printf("%s: %.1f ns/key\n", v, best[v])
	}
}
