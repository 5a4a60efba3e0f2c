package txlog

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestDecompressLargeReleased: a large payload decompressed and dropped is
// garbage: nothing of the decoder keeps it. The shared decoder's pooled
// block decoders each kept the last output they produced, so a 32 MiB
// payload read twice stayed in the heap twice after its readers were gone.
func TestDecompressLargeReleased(t *testing.T) {
	const size = 32 << 20
	r := rand.New(rand.NewPCG(1, 2))
	p := make([]byte, size)
	for i := range p {
		p[i] = '0' + byte(r.IntN(10)) // compressible, not trivially
	}
	c := compress(p)
	if c == nil || len(c) < largeStored {
		t.Fatalf("compressed to %d bytes: not a large stored payload", len(c))
	}
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	base := heap()
	for i := 0; i < 4; i++ {
		out, err := decompress(c)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, p) {
			t.Fatal("decompressed bytes differ")
		}
	}
	if grown := int64(heap()) - int64(base); grown > size/4 {
		t.Errorf("the heap kept %d bytes after 4 decompressions of a %d-byte payload were dropped", grown, size)
	}
	runtime.KeepAlive(c)
	runtime.KeepAlive(p)
}
