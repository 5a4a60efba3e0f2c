package sqlfront

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// TestCompareTextAgreesWithCompare: the fast path's compareText (the ASCII
// weight table and the skip of equal leading bytes) orders every pair of
// strings as the column type's own Compare does, for collations of
// ASCII-compatible character sets and for one that is not (UTF-16, where
// the table is not used). Strings share long prefixes and mix ASCII with
// two-, three- and four-byte runes, case and accent variants.
func TestCompareTextAgreesWithCompare(t *testing.T) {
	ctx := sql.NewEmptyContext()
	pieces := []string{"a", "A", "b", "z", "Z", "0", "9", "-", " ", "é", "E", "e", "ß", "ss", "中", "文", "😀", "\u00a0", "\t", "_", "~"}
	colls := []sql.CollationID{
		sql.Collation_utf8mb4_0900_ai_ci, sql.Collation_utf8mb4_0900_bin, sql.Collation_utf8mb4_general_ci,
		sql.Collation_utf8mb4_bin, sql.Collation_utf8mb3_general_ci, sql.Collation_latin1_swedish_ci,
		sql.Collation_latin1_bin, sql.Collation_utf16_general_ci,
	}
	rng := rand.New(rand.NewSource(1))
	gen := func(prefix string) string {
		var b strings.Builder
		b.WriteString(prefix)
		for n := rng.Intn(6); n > 0; n-- {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		return b.String()
	}
	sign := func(c int) int {
		switch {
		case c < 0:
			return -1
		case c > 0:
			return 1
		}
		return 0
	}
	for _, coll := range colls {
		typ := types.MustCreateString(types.Text.Type(), 1000, coll)
		latin := coll.CharacterSet() == sql.CharacterSet_latin1
		for i := 0; i < 3000; i++ {
			p := gen("")
			a, b := gen(p), gen(p)
			if i%7 == 0 {
				b = a
			}
			if latin && (!inLatin1(a) || !inLatin1(b)) {
				continue // values are UTF-8 in Go whatever the column's character set
			}
			want, err := typ.Compare(ctx, a, b)
			if err != nil {
				t.Fatalf("%s: Compare(%q, %q): %v", coll, a, b, err)
			}
			got, err := compareText(ctx, typ, a, b)
			if err != nil {
				t.Fatalf("%s: compareText(%q, %q): %v", coll, a, b, err)
			}
			if sign(got) != sign(want) {
				t.Fatalf("%s: compareText(%q, %q) = %d, Compare = %d", coll, a, b, got, want)
			}
		}
	}
}

// inLatin1 reports whether every rune of s has a latin1 character.
func inLatin1(s string) bool {
	for _, r := range s {
		if r > 0xff {
			return false
		}
	}
	return true
}
