package sqlfront

import "strings"

// Reading SQL text outside its quoted strings, quoted names and comments,
// for the rewrites that go-mysql-server's parser needs done on the text
// (modifiers.go, schemasyn.go, setscope.go).

// skipQuoted returns the index of the last byte of the string, quoted name
// or comment that starts at q[i]; i if none starts there; -1 if it does
// not end.
func skipQuoted(q string, i int) int {
	switch c := q[i]; {
	case c == '\'' || c == '"' || c == '`':
		return closingQuote(q, i)
	case c == '/' && i+1 < len(q) && q[i+1] == '*':
		j := strings.Index(q[i+2:], "*/")
		if j < 0 {
			return -1
		}
		return i + 2 + j + 1
	case c == '#' || (c == '-' && strings.HasPrefix(q[i:], "-- ")):
		j := strings.IndexByte(q[i:], '\n')
		if j < 0 {
			return -1
		}
		return i + j
	}
	return i
}

// closingQuote is the index of the quote that closes the one at q[i]
// (a doubled quote or a backslash escape stays inside), or -1.
func closingQuote(q string, i int) int {
	quote := q[i]
	for j := i + 1; j < len(q); j++ {
		switch q[j] {
		case '\\':
			if quote != '`' {
				j++
			}
		case quote:
			if j+1 < len(q) && q[j+1] == quote {
				j++
				continue
			}
			return j
		}
	}
	return -1
}

// sqlWords returns the [start, end) of each word (letters, digits, _ and
// $) of q outside quotes and comments.
func sqlWords(q string) [][2]int {
	var out [][2]int
	for i := 0; ; {
		s, e := nextWord(q, i)
		if s == e {
			return out
		}
		out = append(out, [2]int{s, e})
		i = e
	}
}

// nextWord returns the [start, end) of the first word (letters, digits, _
// and $) of q at or after i outside quotes and comments; start == end
// when there is none.
func nextWord(q string, i int) (int, int) {
	for ; i < len(q); i++ {
		if j := skipQuoted(q, i); j != i {
			if j < 0 {
				return len(q), len(q)
			}
			i = j
			continue
		}
		if isWordByte(q[i]) {
			j := i
			for j < len(q) && isWordByte(q[j]) {
				j++
			}
			return i, j
		}
	}
	return len(q), len(q)
}

// firstWord splits s into its leading word and the rest.
func firstWord(s string) (string, string) {
	i := 0
	for i < len(s) && isWordByte(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// blank reports whether s is only white space: the words either side of
// it are neighbours.
func blank(s string) bool { return strings.TrimSpace(s) == "" }
