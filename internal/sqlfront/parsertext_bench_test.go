package sqlfront

import (
	"strings"
	"testing"
)

// The text rewrites every statement the parser sees goes through
// (parserText), against the locking-clause rewrite alone, which is what
// the parser got before statement modifiers and SCHEMA were rewritten:
//
//	go test -run XXX -bench ParserText ./internal/sqlfront/

var parserTextSink string

func parserTextQueries() map[string]string {
	var long strings.Builder
	long.WriteString("INSERT INTO t VALUES ")
	for i := 0; i < 20000; i++ {
		long.WriteString("(1,'some text value here',3.5),")
	}
	long.WriteString("(2,'x',1)")
	return map[string]string{"short": "UPDATE sbtest1 SET k=k+1 WHERE id=5012", "1MB": long.String()}
}

func BenchmarkParserText(b *testing.B) {
	for name, q := range parserTextQueries() {
		for _, f := range []struct {
			name string
			fn   func(string) string
		}{{"all", parserText}, {"locking-only", normaliseLocking}} {
			b.Run(name+"/"+f.name, func(b *testing.B) {
				b.SetBytes(int64(len(q)))
				for i := 0; i < b.N; i++ {
					parserTextSink = f.fn(q)
				}
			})
		}
	}
}
