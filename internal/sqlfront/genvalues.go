package sqlfront

import (
	"context"
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Values for generated columns in an INSERT (issue 30).
//
// MySQL 8 refuses a value for a generated column other than DEFAULT
// (3105), in every sql_mode. MariaDB refuses it in strict mode and
// otherwise ignores it with warning 1906. mariadb-dump, the dump tool a
// Debian user has, writes every column's value into its INSERTs (with no
// column list) and sets a non-strict sql_mode before them, so its dumps of
// a table with generated columns reloaded into MariaDB but not into
// lockstep. lockstep takes MariaDB's rule for non-strict modes, and
// MySQL 8's error otherwise: under STRICT_TRANS_TABLES or
// STRICT_ALL_TABLES (MySQL 8's default) such an INSERT is 3105, as in
// MySQL. Under a non-strict mode each value given for a generated column
// is replaced by DEFAULT, the column computes its own, and warning 1906
// says so.
//
// The rewrite is on the parsed INSERT ... VALUES (not INSERT ... SELECT),
// before go-mysql-server plans it: an INSERT without a column list gets
// the table's columns written out, in every mode (go-mysql-server refused
// such an INSERT even with DEFAULT for the generated columns).

// generatedValues rewrites st as described, for a non-strict session.
func generatedValues(ctx context.Context, st *ast.Insert) {
	var rows ast.Values
	switch r := st.Rows.(type) {
	case ast.Values:
		rows = r
	case ast.AliasedValues:
		rows = r.Values
	case *ast.AliasedValues:
		rows = r.Values
	}
	if len(rows) == 0 {
		return
	}
	sctx, s := parsingSession(ctx)
	if s == nil {
		return
	}
	dbName := st.Table.DbQualifier.String()
	if dbName == "" {
		dbName = sctx.GetCurrentDatabase()
	}
	te := s.fe.lookupEntry(strings.ToLower(dbName), strings.ToLower(st.Table.Name.String()))
	if te == nil {
		return
	}
	schema := te.load().schema.Schema
	generated := false
	for _, c := range schema {
		if c.Generated != nil {
			generated = true
			break
		}
	}
	if !generated {
		return
	}
	// The position of each generated column in the statement's rows.
	var cols []string
	if len(st.Columns) == 0 {
		for _, c := range schema {
			cols = append(cols, c.Name)
		}
	} else {
		for _, c := range st.Columns {
			cols = append(cols, c.String())
		}
	}
	gen := make([]bool, len(cols))
	any := false
	for i, name := range cols {
		if j := schema.IndexOfColName(name); j >= 0 && schema[j].Generated != nil {
			gen[i], any = true, true
		}
	}
	if !any {
		return
	}
	for _, row := range rows {
		if len(row) != len(cols) {
			return // go-mysql-server's column count error
		}
	}
	if len(st.Columns) == 0 {
		// go-mysql-server refuses a table with generated columns without
		// a column list, DEFAULT values included (MySQL takes them).
		st.Columns = make(ast.Columns, len(cols))
		for i, name := range cols {
			st.Columns[i] = ast.NewColIdent(name)
		}
	}
	if strictMode(sctx) {
		return // a value other than DEFAULT is 3105, as in MySQL 8
	}
	for _, row := range rows {
		for i, e := range row {
			if !gen[i] {
				continue
			}
			if _, isDefault := e.(*ast.Default); isDefault {
				continue
			}
			row[i] = &ast.Default{}
			// Warnings are cleared after parsing: the INSERT gives them
			// when it runs (takeGeneratedWarnings).
			s.genWarnings = append(s.genWarnings, &sql.Warning{Level: "Warning", Code: 1906, Message: fmt.Sprintf(
				"The value specified for generated column '%s' in table '%s' has been ignored", cols[i], st.Table.Name.String())})
		}
	}
}

// mayHaveGenerated is a cheap filter: the rewrite matters only once a
// table has a generated column, and only for INSERT ... VALUES.
func mayHaveGenerated(q string) bool { return containsFold(q, "values") }

// giveGeneratedWarnings adds the warnings generatedValues noted for the
// running INSERT.
func (s *Session) giveGeneratedWarnings() {
	for _, w := range s.genWarnings {
		s.Warn(w)
	}
	s.genWarnings = nil
}
