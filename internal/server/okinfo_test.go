package server

import (
	"bytes"
	"strings"
	"testing"
)

// okPacket is an OK packet as vitess writes one with an info string: '#'
// where the string's length belongs.
func okPacket(seq byte, info string) []byte {
	payload := append([]byte{0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, '#'}, info...)
	n := len(payload)
	return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}, payload...)
}

func TestWithInfoLength(t *testing.T) {
	long := strings.Repeat("x", 300)
	for _, tc := range []struct {
		name string
		p    []byte
		info string
		want []byte // nil: not the packet
	}{
		{"short", okPacket(1, "Statement prepared"), "Statement prepared",
			append([]byte{26, 0, 0, 1, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 18}, "Statement prepared"...)},
		{"rows matched", okPacket(3, "Rows matched: 1  Changed: 1  Warnings: 0"), "Rows matched: 1  Changed: 1  Warnings: 0",
			append([]byte{48, 0, 0, 3, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 40}, "Rows matched: 1  Changed: 1  Warnings: 0"...)},
		{"three-byte length", okPacket(1, long), long,
			append([]byte{0x36, 0x01, 0x00, 1, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0xfc, 0x2c, 0x01}, long...)},
		{"other info", okPacket(1, "Records: 2"), "Records: 3", nil},
		{"two packets", append(okPacket(1, "a"), okPacket(2, "Records: 2")...), "Records: 2", nil},
		{"header only", okPacket(1, "abc")[:4], "abc", nil},
		{"cut short", okPacket(1, "abcdef")[:10], "abc", nil},
		{"not an OK packet", append([]byte{9, 0, 0, 1, 0x01}, "\x00\x00\x00\x00#abc"...), "abc", nil},
		{"no '#'", append([]byte{9, 0, 0, 1, 0x00}, "\x00\x00\x00\x00\x03abc"...), "abc", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := withInfoLength(append([]byte(nil), tc.p...), tc.info)
			if !bytes.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
				t.Fatalf("withInfoLength = %v, want %v", got, tc.want)
			}
		})
	}
}
