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

// largeStored is the stored (compressed) size from which a payload is
// decompressed by a decoder of its own rather than the shared one.
const largeStored = 1 << 20

func decompress(p []byte) ([]byte, error) {
	d := zdec()
	if len(p) >= largeStored {
		// The shared decoder's pooled block decoders keep a reference to
		// the last output each produced (klauspost/compress 1.20's
		// sequence decoders keep their out slice), so a large payload —
		// a 1,000,000-row transaction's 76 MiB — stayed reachable after
		// its reader dropped it, once per pooled decoder. A decoder of
		// its own is garbage with its output's last reference.
		var err error
		if d, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(MaxPayload)); err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		defer d.Close()
	}
	out, err := d.DecodeAll(p, nil)
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	return out, nil
}
