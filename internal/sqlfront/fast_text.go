package sqlfront

import (
	"strconv"
	"strings"

	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// Text queries on the fast path.
//
// A text query (COM_QUERY: the text protocol PyMySQL, the mysql CLI and
// sysbench --db-ps-mode=disable use) is normalised: its integer and plain
// string literals become parameter markers, so `SELECT c FROM t WHERE
// id=5` and `... id=6` share the text `SELECT c FROM t WHERE id=?` and one
// plan, the literals becoming bound values typed as the client would bind
// them (an integer, a decimal, a string; a minus sign after '=', ',' or
// '(' belongs to the number). The plan is recognised from the normalised
// text as a prepared statement is; its result metadata is learned from
// go-mysql-server's answer to the first such query, which go-mysql-server
// runs. Anything the normaliser is not sure about — comments, escapes in
// strings, charset introducers, hexadecimal literals or exponents, several
// statements — leaves the query to go-mysql-server.

// maxTextPlans bounds the normalised texts a session keeps plans (or "not
// recognised" answers) for; the map is emptied when full.
const maxTextPlans = 512

// normaliseText returns query with its literals replaced by '?' and the
// literals as bind variables v1, v2, ... ok is false when the text has
// something the normaliser does not handle.
func normaliseText(query string) (norm string, binds []*querypb.BindVariable, ok bool) {
	var b strings.Builder
	b.Grow(len(query))
	i := 0
	n := len(query)
	for i < n {
		c := query[i]
		switch {
		case c == '\'' || c == '"':
			// A string literal without escapes (a backslash or a doubled
			// quote makes the normaliser give up). Double quotes are
			// identifiers under ANSI_QUOTES: give up on them too.
			if c == '"' {
				return "", nil, false
			}
			j := i + 1
			for j < n && query[j] != c {
				if query[j] == '\\' {
					return "", nil, false
				}
				j++
			}
			if j >= n || (j+1 < n && query[j+1] == c) {
				return "", nil, false
			}
			if prevWordChar(query, i) {
				return "", nil, false // _utf8mb4'x', N'x', X'ff', b'01'
			}
			binds = append(binds, &querypb.BindVariable{Type: querypb.Type_VARCHAR, Value: []byte(query[i+1 : j])})
			b.WriteByte('?')
			i = j + 1
		case c >= '0' && c <= '9' || c == '-' && i+1 < n && query[i+1] >= '0' && query[i+1] <= '9' && signPosition(b.String()):
			if c != '-' && prevWordChar(query, i) {
				// part of an identifier such as sbtest1
				j := i
				for j < n && isWordChar(query[j]) {
					j++
				}
				b.WriteString(query[i:j])
				i = j
				continue
			}
			bv, j, ok := numberLiteral(query, i)
			if !ok {
				return "", nil, false
			}
			binds = append(binds, bv)
			b.WriteByte('?')
			i = j
		case c == '`':
			j := strings.IndexByte(query[i+1:], '`')
			if j < 0 {
				return "", nil, false
			}
			b.WriteString(query[i : i+j+2])
			i += j + 2
		case c == '#' || c == '/' && i+1 < n && query[i+1] == '*' || c == '-' && i+1 < n && query[i+1] == '-':
			return "", nil, false // comments (optimizer hints, /*! ... */)
		case c == ';':
			if strings.TrimSpace(query[i+1:]) != "" {
				return "", nil, false // several statements
			}
			i = n
		case c == '?' || c == '@' || c == '\\':
			return "", nil, false
		default:
			b.WriteByte(c)
			i++
		}
	}
	return strings.TrimRight(b.String(), " \t\r\n"), binds, true
}

// numberLiteral reads the number at query[i:] — an optional minus sign
// (where signPosition allows one), digits, and an optional point with
// digits — as a bind variable: an integer as INT64 (UINT64 past 2^63-1),
// one with a point as DECIMAL (its text: go-mysql-server's planner makes a
// decimal literal an exact decimal too). Exponents, hexadecimal and binary
// literals, a point without digits after it, and a number running into a
// word are not taken (ok false).
func numberLiteral(query string, i int) (bv *querypb.BindVariable, end int, ok bool) {
	n := len(query)
	j := i
	if query[j] == '-' {
		j++
	}
	for j < n && query[j] >= '0' && query[j] <= '9' {
		j++
	}
	point := false
	if j < n && query[j] == '.' {
		point = true
		j++
		k := j
		for j < n && query[j] >= '0' && query[j] <= '9' {
			j++
		}
		if j == k {
			return nil, 0, false // 1.
		}
	}
	if j < n && (query[j] == '.' || query[j] == 'e' || query[j] == 'E' || isWordChar(query[j])) {
		return nil, 0, false // 1.5.6, 1e3, 1.5e3, 0x1f, 0b1, 1abc
	}
	lit := query[i:j]
	if point {
		return &querypb.BindVariable{Type: querypb.Type_DECIMAL, Value: []byte(lit)}, j, true
	}
	if _, err := strconv.ParseInt(lit, 10, 64); err == nil {
		return &querypb.BindVariable{Type: querypb.Type_INT64, Value: []byte(lit)}, j, true
	}
	if _, err := strconv.ParseUint(lit, 10, 64); err == nil {
		return &querypb.BindVariable{Type: querypb.Type_UINT64, Value: []byte(lit)}, j, true
	}
	return nil, 0, false
}

// signPosition reports whether a minus sign after the normalised text so
// far is a number's sign rather than subtraction: it follows '=', ',' or
// '(' (`SET c = -10.5`, `VALUES (-1, -2)`, `WHERE id = -5`). Anywhere else
// (`a -5`, `a - -5`) the minus stays an operator.
func signPosition(norm string) bool {
	k := len(norm) - 1
	for k >= 0 && (norm[k] == ' ' || norm[k] == '\t' || norm[k] == '\n' || norm[k] == '\r') {
		k--
	}
	return k >= 0 && (norm[k] == '=' || norm[k] == ',' || norm[k] == '(')
}

func isWordChar(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// prevWordChar reports whether query[i-1] is part of a word.
func prevWordChar(query string, i int) bool {
	return i > 0 && isWordChar(query[i-1])
}
