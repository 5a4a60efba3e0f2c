package sqlfront

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"

	"lockstep/internal/storage/rowenc"
)

// TestEncodeRowExactSize: storage keeps the encoded rows it is given, so
// encodeRow(nil, ...) must not hand it spare capacity (a sysbench row grown
// by appends kept 265 bytes of heap for 190 of row), and its bytes must be
// rowenc's encoding.
func TestEncodeRowExactSize(t *testing.T) {
	row := sql.Row{int32(7), int32(42), strings.Repeat("12345678901-", 10)[:119], strings.Repeat("9", 59)}
	want, err := rowenc.EncodeRow(nil, row)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 { // the second and third take a pooled scratch buffer
		got, err := encodeRow(nil, row)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("encodeRow = %x, want %x", got, want)
		}
		if cap(got) != len(got) {
			t.Errorf("encodeRow(nil) has cap %d for %d bytes", cap(got), len(got))
		}
	}
}
