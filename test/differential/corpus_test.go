package differential

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// A corpus file (testdata/*.sql) is one scenario: its statements run in
// order on one connection to each server, in a fresh database. Statements end
// with ';' at the end of a line. Comment lines starting with "-- " just
// before a statement are directives:
//
//	-- unordered            rows are compared as a set (sorted first)
//	-- ignore: types info   parts of the outcome not compared (types,
//	                        message, info, warnings, status)
//	-- mysql8: REASON       MariaDB differs from MySQL 8 here: lockstep is
//	-- expect: LINE         compared with the expect lines (MySQL 8's
//	                        outcome, rendered as render does) instead
//	-- lockstep: REASON     lockstep differs from MySQL 8 here, known and
//	-- expect: LINE         not fixed yet: today's outcome is asserted so
//	                        that a change is seen
//
// Other comment lines ("--" followed by anything else, or "#") are ignored.

type statement struct {
	file      string
	line      int
	sql       string
	unordered bool
	ignore    map[string]bool
	why       string   // mysql8: or lockstep: reason
	kind      string   // "", "mysql8" or "lockstep"
	expect    []string // rendered outcome expected from lockstep
}

func loadCorpus(dir string) (map[string][]statement, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.sql"))
	if err != nil {
		return nil, err
	}
	out := map[string][]statement{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		stmts, err := parseCorpus(filepath.Base(f), string(data))
		if err != nil {
			return nil, err
		}
		out[strings.TrimSuffix(filepath.Base(f), ".sql")] = stmts
	}
	return out, nil
}

func parseCorpus(name, text string) ([]statement, error) {
	var out []statement
	cur := statement{file: name}
	var sqlLines []string
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if len(sqlLines) == 0 {
			switch {
			case trimmed == "":
				continue
			case strings.HasPrefix(trimmed, "#"):
				continue
			case strings.HasPrefix(trimmed, "--"):
				if err := cur.directive(strings.TrimSpace(trimmed[2:])); err != nil {
					return nil, fmt.Errorf("%s:%d: %w", name, i+1, err)
				}
				continue
			}
			cur.line = i + 1
		}
		sqlLines = append(sqlLines, line)
		if strings.HasSuffix(trimmed, ";") {
			cur.sql = strings.TrimSuffix(strings.TrimSpace(strings.Join(sqlLines, "\n")), ";")
			if cur.kind != "" && len(cur.expect) == 0 {
				return nil, fmt.Errorf("%s:%d: a %s: directive needs expect: lines", name, cur.line, cur.kind)
			}
			out = append(out, cur)
			cur = statement{file: name}
			sqlLines = nil
		}
	}
	if len(sqlLines) > 0 {
		return nil, fmt.Errorf("%s:%d: statement without a closing ';'", name, cur.line)
	}
	return out, nil
}

func (s *statement) directive(d string) error {
	key, val, _ := strings.Cut(d, ":")
	val = strings.TrimSpace(val)
	switch strings.TrimSpace(key) {
	case "unordered":
		s.unordered = true
	case "ignore":
		if s.ignore == nil {
			s.ignore = map[string]bool{}
		}
		for _, w := range strings.Fields(val) {
			switch w {
			case "types", "message", "info", "warnings", "status":
				s.ignore[w] = true
			default:
				return fmt.Errorf("unknown ignore: %q", w)
			}
		}
	case "mysql8", "lockstep":
		if val == "" {
			return fmt.Errorf("%s: needs a reason", key)
		}
		s.kind, s.why = strings.TrimSpace(key), val
	case "expect":
		if s.kind == "" {
			return fmt.Errorf("expect: without mysql8: or lockstep:")
		}
		s.expect = append(s.expect, val)
	}
	// Anything else is a plain comment.
	return nil
}

// render writes an outcome as the lines the corpus's expect: directives use:
//
//	error 1062 (23000): Duplicate entry '1' for key 't.PRIMARY'
//	ok affected=1 insert_id=0
//	info: Rows matched: 1  Changed: 1  Warnings: 0
//	columns: id LONG, v VAR_STRING
//	row: 1 | 'a'
//	row: 2 | NULL
//	status: autocommit in_trans
//	warning: Warning 1265 Data truncated for column 'v' at row 1
func render(st statement, o *outcome, warnings [][]*string) []string {
	var out []string
	ign := st.ignore
	if o.err != nil {
		line := fmt.Sprintf("error %d (%s)", o.err.code, o.err.state)
		if !ign["message"] {
			line += ": " + o.err.message
		}
		out = append(out, line)
	} else if o.cols == nil {
		out = append(out, fmt.Sprintf("ok affected=%d insert_id=%d", o.affected, o.insertID))
		if o.info != "" && !ign["info"] {
			out = append(out, "info: "+o.info)
		}
	} else {
		cols := make([]string, len(o.cols))
		for i, c := range o.cols {
			cols[i] = c.name
			if !ign["types"] {
				cols[i] += " " + columnType(c)
				if c.flags&32 != 0 {
					cols[i] += " unsigned"
				}
			}
		}
		out = append(out, "columns: "+strings.Join(cols, ", "))
		rows := make([]string, len(o.rows))
		for i, r := range o.rows {
			rows[i] = "row: " + renderRow(r)
		}
		if st.unordered {
			sort.Strings(rows)
		}
		out = append(out, rows...)
	}
	if !ign["status"] {
		var flags []string
		if o.status&statusAutocommit != 0 {
			flags = append(flags, "autocommit")
		}
		if o.status&statusInTrans != 0 {
			flags = append(flags, "in_trans")
		}
		out = append(out, strings.TrimSpace("status: "+strings.Join(flags, " ")))
	}
	if !ign["warnings"] {
		for _, w := range warnings {
			out = append(out, "warning: "+renderWarning(w))
		}
	}
	return out
}

// columnType names a column's protocol type. A computed column's integer
// width is not compared: MariaDB narrows an integer expression by its display
// width (LONG for 1 + 1) where MySQL 8 mostly says BIGINT, so both sides'
// integer expressions render as INTEGER. Columns read from a table keep
// their exact type.
func columnType(c column) string {
	if c.orgTable == "" {
		switch c.typ {
		case 1, 2, 3, 8, 9: // TINY, SHORT, LONG, LONGLONG, INT24
			return "INTEGER"
		}
	}
	return typeName(c.typ)
}

func renderRow(r []*string) string {
	return joinValues(r, func(v string) string { return "'" + escape(v) + "'" }, " | ")
}

// escape writes control bytes, backslashes and bytes that are not UTF-8 as
// \xNN so that a value stays on one expect: line.
func escape(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); {
		r, size := utf8.DecodeRuneInString(v[i:])
		switch {
		case r == utf8.RuneError && size <= 1, r < 0x20, r == 0x7f, r == '\\':
			fmt.Fprintf(&b, "\\x%02x", v[i])
		default:
			b.WriteString(v[i : i+size])
		}
		i += size
	}
	return b.String()
}

func renderWarning(w []*string) string {
	return joinValues(w, func(v string) string { return v }, " ")
}

// joinValues renders vals (nil: NULL, the others through show) joined by
// sep.
func joinValues(vals []*string, show func(string) string, sep string) string {
	out := make([]string, len(vals))
	for i, v := range vals {
		if v == nil {
			out[i] = "NULL"
		} else {
			out[i] = show(*v)
		}
	}
	return strings.Join(out, sep)
}
