package txlog

import (
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// One encoder and one decoder for the process: both are safe for concurrent
// EncodeAll/DecodeAll and keep their own pools of state.
var (
	zenc = sync.OnceValue(func() *zstd.Encoder {
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(false))
		if err != nil {
			panic(err)
		}
		return e
	})
	zdec = sync.OnceValue(func() *zstd.Decoder {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(MaxPayload))
		if err != nil {
			panic(err)
		}
		return d
	})
)

// compress returns p compressed, or nil if that does not make it smaller.
func compress(p []byte) []byte {
	c := zenc().EncodeAll(p, make([]byte, 0, len(p)/2))
	if len(c) >= len(p) {
		return nil
	}
	return c
}

func decompress(p []byte) ([]byte, error) {
	out, err := zdec().DecodeAll(p, nil)
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	return out, nil
}
