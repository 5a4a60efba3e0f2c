package sqlfront

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// go-mysql-server reports foreign key errors in its own words, most as
// 1105, and names a key without its columns. ForeignKeyError gives them
// MySQL 8's numbers, SQLSTATEs and wording, looking the keys up in the
// catalog (or, for a key that a failing statement was adding, in the
// statement).

var (
	reFKChild      = regexp.MustCompile("cannot add or update a child row - Foreign key violation on fk: `(.*?)`, table: `(.*?)`, referenced table: `(.*?)`, key: `")
	reFKParent     = regexp.MustCompile("cannot delete or update a parent row - Foreign key violation on fk: `(.*?)`, table: `(.*?)`, referenced table: `(.*?)`, key: `")
	reFKUnresolved = regexp.MustCompile("cannot add or update a child row: a foreign key constraint fails (\\(.*\\))")
	reFKDropTable  = regexp.MustCompile("cannot drop table `(.*?)` as it is referenced in foreign key `(.*?)`")
	reFKTypes      = regexp.MustCompile("column type mismatch on `(.*?)` and `(.*?)`")
	reFKNoIndex    = regexp.MustCompile("missing index for foreign key `(.*?)` on the referenced table `(.*?)`")
	reFKSetNull    = regexp.MustCompile("cannot use SET NULL as column `(.*?)` is non-nullable")
	reFKDupName    = regexp.MustCompile("duplicate foreign key constraint name `(.*?)`")
	reFKDropIndex  = regexp.MustCompile("cannot drop index: `(.*?)` is used by foreign key `(.*?)`")
	reFKDropColumn = regexp.MustCompile("cannot drop column `(.*?)` as it is used in foreign key `(.*?)`")
	reFKNotFound   = regexp.MustCompile("foreign key `(.*?)` was not found on the table `(.*?)`")
	reFKTruncate   = regexp.MustCompile(`cannot truncate table (\S+) as it is referenced in foreign key (\S+) on table (\S+)`)
	reFKDepth      = regexp.MustCompile(`Foreign key cascade delete/update exceeds max depth of 15`)
	reFKTypeChange = regexp.MustCompile("unable to change type of column `(.*?)` as it is used by foreign keys")
	reFKColCount   = regexp.MustCompile(`the foreign key must reference an equivalent number of columns`)
	reFKSetDefault = regexp.MustCompile(`"SET DEFAULT" is not supported`)
	reTableMissing = regexp.MustCompile(`^table not found: (.*)$`)
	reColumnAbsent = regexp.MustCompile(`^table "(.*?)" does not have column "(.*?)"$`)
)

// ForeignKeyError returns err as MySQL reports it when it is a foreign key
// error of query, run by connection connID; other errors come back as they
// are.
func (fe *Frontend) ForeignKeyError(connID uint32, query string, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	var se *mysql.SQLError
	if errors.As(err, &se) {
		msg = se.Message
	}
	msg = strings.TrimPrefix(msg, "unknown error: ")
	x := fkErrContext{fe: fe, curDB: fe.CurrentDatabase(connID), query: query}
	if out := x.mapError(msg); out != nil {
		return out
	}
	return err
}

// ErrorContext is what a statement's error message needs from connection
// connID's session: its current database, and the row the statement was at
// when it failed (rows handed to the table editors + 1; 1 before any), and
// the column whose value did not convert and that value, if that is why
// (errcolumn.go), with the column's type as SQL writes it ("date",
// "datetime(6)").
func (fe *Frontend) ErrorContext(connID uint32) (db string, row int, column, value, columnType string) {
	s := fe.session(connID)
	if s == nil {
		return "", 1, "", "", ""
	}
	if bad := s.conv.values(s.fastContext()); len(bad) > 0 {
		column, value = bad[0].col, bad[0].val
		if bad[0].typ != nil {
			columnType = strings.ToLower(bad[0].typ.String())
		}
	}
	return s.GetCurrentDatabase(), s.rowsWritten + 1, column, value, columnType
}

// CurrentDatabase is connection connID's current database ("" for none).
func (fe *Frontend) CurrentDatabase(connID uint32) string {
	s := fe.session(connID)
	if s == nil {
		return ""
	}
	return s.GetCurrentDatabase()
}

type fkErrContext struct {
	fe    *Frontend
	curDB string
	query string
}

func hy000(num int, format string, args ...any) error {
	return mysql.NewSQLError(num, "HY000", format, args...)
}

func (x *fkErrContext) mapError(msg string) error {
	if m := reFKChild.FindStringSubmatch(msg); m != nil {
		return mysql.NewSQLError(mysql.ErNoReferencedRow2, "23000",
			"Cannot add or update a child row: a foreign key constraint fails (%s)", x.describe(m[2], m[1]))
	}
	if m := reFKParent.FindStringSubmatch(msg); m != nil {
		return mysql.NewSQLError(mysql.ERRowIsReferenced2, "23000",
			"Cannot delete or update a parent row: a foreign key constraint fails (%s)", x.describe(m[2], m[1]))
	}
	if m := reFKUnresolved.FindStringSubmatch(msg); m != nil {
		return mysql.NewSQLError(mysql.ErNoReferencedRow2, "23000",
			"Cannot add or update a child row: a foreign key constraint fails %s", m[1])
	}
	if m := reFKDropTable.FindStringSubmatch(msg); m != nil {
		child := "?"
		if d, c, _, ok := x.findFK("", m[2]); ok {
			child = c.Table
			if !strings.EqualFold(d.name, x.curDB) {
				child = d.name + "." + c.Table
			}
		}
		return hy000(3730, "Cannot drop table '%s' referenced by a foreign key constraint '%s' on table '%s'.", m[1], m[2], child)
	}
	if m := reFKTypes.FindStringSubmatch(msg); m != nil {
		return hy000(3780, "Referencing column '%s' and referenced column '%s' in foreign key constraint '%s' are incompatible.",
			m[1], m[2], x.stmtFKName(func(d stmtFK) bool { return d.hasPair(m[1], m[2]) }))
	}
	if m := reFKNoIndex.FindStringSubmatch(msg); m != nil {
		name := m[1]
		if name == "" {
			name = x.stmtFKName(func(d stmtFK) bool { return strings.EqualFold(d.parent, m[2]) })
		}
		return hy000(1822, "Failed to add the foreign key constraint. Missing index for constraint '%s' in the referenced table '%s'", name, m[2])
	}
	if m := reFKSetNull.FindStringSubmatch(msg); m != nil {
		return hy000(1830, "Column '%s' cannot be NOT NULL: needed in a foreign key constraint '%s' SET NULL",
			m[1], x.stmtFKName(func(d stmtFK) bool { return d.hasCol(m[1]) }))
	}
	if m := reFKDupName.FindStringSubmatch(msg); m != nil {
		return hy000(1826, "Duplicate foreign key constraint name '%s'", m[1])
	}
	if m := reFKDropIndex.FindStringSubmatch(msg); m != nil {
		return hy000(1553, "Cannot drop index '%s': needed in a foreign key constraint", m[1])
	}
	if m := reFKDropColumn.FindStringSubmatch(msg); m != nil {
		if _, c, _, ok := x.findFK("", m[2]); ok && !strings.EqualFold(c.Table, x.stmtTable()) {
			return hy000(1829, "Cannot drop column '%s': needed in a foreign key constraint '%s' of table '%s'", m[1], m[2], c.Table)
		}
		return hy000(1828, "Cannot drop column '%s': needed in a foreign key constraint '%s'", m[1], m[2])
	}
	if m := reFKNotFound.FindStringSubmatch(msg); m != nil {
		return mysql.NewSQLError(mysql.ERCantDropFieldOrKey, "42000", "Can't DROP '%s'; check that column/key exists", m[1])
	}
	if m := reFKTruncate.FindStringSubmatch(msg); m != nil {
		db := x.curDB
		if d, _, _, ok := x.findFK(m[3], m[2]); ok {
			db = d.name
		}
		return mysql.NewSQLError(1701, "42000", "Cannot truncate a table referenced in a foreign key constraint (%s.%s, CONSTRAINT %s)",
			QuoteIdent(db), QuoteIdent(m[3]), QuoteIdent(m[2]))
	}
	if reFKDepth.MatchString(msg) {
		return hy000(3008, "Foreign key cascade delete/update exceeds max depth of 15.")
	}
	if m := reFKTypeChange.FindStringSubmatch(msg); m != nil {
		if c, pcol, ok := x.fkOfColumn(x.stmtTable(), m[1]); ok {
			return hy000(3780, "Referencing column '%s' and referenced column '%s' in foreign key constraint '%s' are incompatible.", m[1], pcol, c.Name)
		}
		return hy000(1832, "Cannot change column '%s': used in a foreign key constraint", m[1])
	}
	if reFKSetDefault.MatchString(msg) {
		return hy000(1215, "Cannot add foreign key constraint")
	}
	if reFKColCount.MatchString(msg) {
		return mysql.NewSQLError(1239, "42000", "Incorrect foreign key definition for '%s': Key reference and table reference don't match",
			x.stmtFKName(func(d stmtFK) bool { return len(d.cols) != len(d.parentCols) }))
	}
	// Errors that are foreign key errors only in a statement adding keys.
	fks := x.stmtFKs()
	if len(fks) == 0 {
		return nil
	}
	if m := reTableMissing.FindStringSubmatch(msg); m != nil {
		for _, d := range fks {
			if strings.EqualFold(d.parent, m[1]) {
				return hy000(1824, "Failed to open the referenced table '%s'", d.parent)
			}
		}
	}
	if m := reColumnAbsent.FindStringSubmatch(msg); m != nil && !strings.EqualFold(m[1], x.stmtTable()) {
		for _, d := range fks {
			if strings.EqualFold(d.parent, m[1]) && d.hasParentCol(m[2]) {
				return hy000(3734, "Failed to add the foreign key constraint. Missing column '%s' for constraint '%s' in the referenced table '%s'",
					m[2], d.name, m[1])
			}
		}
	}
	return nil
}

// findFK finds the key named name (declared by table, when given),
// preferring the current database.
func (x *fkErrContext) findFK(table, name string) (*Database, sql.ForeignKeyConstraint, *tableMeta, bool) {
	var found *Database
	var fc sql.ForeignKeyConstraint
	var fm *tableMeta
	ctx := x.fe.NewLocalContext(context.Background())
	for _, db := range x.fe.provider.AllDatabases(ctx) {
		d := db.(*Database)
		for _, te := range d.entries() {
			m := te.load()
			if table != "" && !strings.EqualFold(m.name, table) {
				continue
			}
			for _, fk := range m.fks {
				if strings.EqualFold(fk.name, name) && (found == nil || strings.EqualFold(d.name, x.curDB)) {
					found, fc, fm = d, d.constraint(m, fk), m
				}
			}
		}
	}
	return found, fc, fm, found != nil
}

// fkOfColumn finds a key of the current database in which column col of
// table is a child or parent column; pcol is the column at the other end.
func (x *fkErrContext) fkOfColumn(table, col string) (sql.ForeignKeyConstraint, string, bool) {
	x.fe.provider.mu.RLock()
	d := x.fe.provider.dbs[strings.ToLower(x.curDB)]
	x.fe.provider.mu.RUnlock()
	if d == nil {
		return sql.ForeignKeyConstraint{}, "", false
	}
	for _, te := range d.entries() {
		m := te.load()
		for _, fk := range m.fks {
			c := d.constraint(m, fk)
			for i := range c.Columns {
				if strings.EqualFold(c.Table, table) && strings.EqualFold(c.Columns[i], col) {
					return c, c.ParentColumns[i], true
				}
				if strings.EqualFold(c.ParentTable, table) && strings.EqualFold(c.ParentColumns[i], col) {
					return c, c.Columns[i], true
				}
			}
		}
	}
	return sql.ForeignKeyConstraint{}, "", false
}

// describe is the part of MySQL's 1451/1452 message in parentheses: the
// child table and the key's definition.
func (x *fkErrContext) describe(table, name string) string {
	d, c, _, ok := x.findFK(table, name)
	if !ok {
		for _, s := range x.stmtFKs() { // a key being added (ALTER TABLE ... ADD FOREIGN KEY)
			if name == "" || strings.EqualFold(s.name, name) {
				return fmt.Sprintf("%s.%s, CONSTRAINT %s", QuoteIdent(x.curDB), QuoteIdent(table), s.clause())
			}
		}
		return fmt.Sprintf("%s.%s, CONSTRAINT %s", QuoteIdent(x.curDB), QuoteIdent(table), QuoteIdent(name))
	}
	s := stmtFK{name: c.Name, cols: c.Columns, parent: c.ParentTable, parentCols: c.ParentColumns,
		onDelete: c.OnDelete, onUpdate: c.OnUpdate}
	if !strings.EqualFold(c.ParentDatabase, d.name) {
		s.parentDB = c.ParentDatabase
	}
	return fmt.Sprintf("%s.%s, CONSTRAINT %s", QuoteIdent(d.name), QuoteIdent(c.Table), s.clause())
}

// stmtFK is a foreign key a CREATE or ALTER TABLE statement declares.
type stmtFK struct {
	name               string
	cols               []string
	parentDB, parent   string
	parentCols         []string
	onDelete, onUpdate sql.ForeignKeyReferentialAction
}

func (d stmtFK) hasCol(c string) bool { return containsFoldStr(d.cols, c) }

func (d stmtFK) hasParentCol(c string) bool { return containsFoldStr(d.parentCols, c) }

func (d stmtFK) hasPair(col, parentCol string) bool {
	for i := range d.cols {
		if i < len(d.parentCols) && strings.EqualFold(d.cols[i], col) && strings.EqualFold(d.parentCols[i], parentCol) {
			return true
		}
	}
	return false
}

func containsFoldStr(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// clause renders the key as InnoDB does in its messages: RESTRICT (and no
// action given) is not printed.
func (d stmtFK) clause() string {
	q := func(names []string) string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = QuoteIdent(n)
		}
		return strings.Join(out, ", ")
	}
	parent := QuoteIdent(d.parent)
	if d.parentDB != "" {
		parent = QuoteIdent(d.parentDB) + "." + parent
	}
	s := fmt.Sprintf("%s FOREIGN KEY (%s) REFERENCES %s (%s)", QuoteIdent(d.name), q(d.cols), parent, q(d.parentCols))
	for _, a := range []struct {
		on  string
		act sql.ForeignKeyReferentialAction
	}{{"DELETE", d.onDelete}, {"UPDATE", d.onUpdate}} {
		switch a.act {
		case sql.ForeignKeyReferentialAction_Cascade, sql.ForeignKeyReferentialAction_SetNull,
			sql.ForeignKeyReferentialAction_NoAction, sql.ForeignKeyReferentialAction_SetDefault:
			s += " ON " + a.on + " " + string(a.act)
		}
	}
	return s
}

// stmtTable is the table the statement creates or alters ("" if none).
func (x *fkErrContext) stmtTable() string {
	st, err := ast.Parse(x.query)
	if err != nil {
		return ""
	}
	switch s := st.(type) {
	case *ast.DDL:
		return s.Table.Name.String()
	case *ast.AlterTable:
		return s.Table.Name.String()
	}
	return ""
}

// stmtFKs returns the foreign keys the statement adds, unnamed ones named
// as MySQL would name them.
func (x *fkErrContext) stmtFKs() []stmtFK {
	if !containsFold(x.query, "foreign") {
		return nil
	}
	st, err := ast.Parse(x.query)
	if err != nil {
		return nil
	}
	var table string
	var specs []*ast.TableSpec
	switch s := st.(type) {
	case *ast.DDL:
		table = s.Table.Name.String()
		if s.TableSpec != nil {
			specs = append(specs, s.TableSpec)
		}
	case *ast.AlterTable:
		table = s.Table.Name.String()
		for _, d := range s.Statements {
			if d.TableSpec != nil && strings.EqualFold(d.ConstraintAction, "add") {
				specs = append(specs, d.TableSpec)
			}
		}
	default:
		return nil
	}
	next := x.nextAutoFKNumber(table)
	var out []stmtFK
	for _, spec := range specs {
		for _, c := range spec.Constraints {
			fk, ok := c.Details.(*ast.ForeignKeyDefinition)
			if !ok {
				continue
			}
			d := stmtFK{name: c.Name, parent: fk.ReferencedTable.Name.String(),
				onDelete: refAction(fk.OnDelete), onUpdate: refAction(fk.OnUpdate)}
			if q := fk.ReferencedTable.DbQualifier.String(); q != "" && !strings.EqualFold(q, x.curDB) {
				d.parentDB = q
			}
			for _, col := range fk.Source {
				d.cols = append(d.cols, col.String())
			}
			for _, col := range fk.ReferencedColumns {
				d.parentCols = append(d.parentCols, col.String())
			}
			if d.name == "" {
				d.name = fmt.Sprintf("%s_ibfk_%d", strings.ToLower(table), next)
				next++
			}
			out = append(out, d)
		}
	}
	return out
}

// nextAutoFKNumber is the number the next unnamed key of table gets
// (<table>_ibfk_<n>).
func (x *fkErrContext) nextAutoFKNumber(table string) int {
	x.fe.provider.mu.RLock()
	d := x.fe.provider.dbs[strings.ToLower(x.curDB)]
	x.fe.provider.mu.RUnlock()
	highest := 0
	if d == nil {
		return 1
	}
	d.mu.RLock()
	te := d.tables[strings.ToLower(table)]
	d.mu.RUnlock()
	if te == nil {
		return 1
	}
	prefix := strings.ToLower(table) + "_ibfk_"
	for _, fk := range te.load().fks {
		if n, err := strconv.Atoi(strings.TrimPrefix(fk.name, prefix)); err == nil && strings.HasPrefix(fk.name, prefix) && n > highest {
			highest = n
		}
	}
	return highest + 1
}

// stmtFKName is the name of the first key of the statement that match
// accepts ("" if none).
func (x *fkErrContext) stmtFKName(match func(stmtFK) bool) string {
	for _, d := range x.stmtFKs() {
		if match(d) {
			return d.name
		}
	}
	return ""
}

func refAction(a ast.ReferenceAction) sql.ForeignKeyReferentialAction {
	switch a {
	case ast.Restrict:
		return sql.ForeignKeyReferentialAction_Restrict
	case ast.Cascade:
		return sql.ForeignKeyReferentialAction_Cascade
	case ast.NoAction:
		return sql.ForeignKeyReferentialAction_NoAction
	case ast.SetNull:
		return sql.ForeignKeyReferentialAction_SetNull
	case ast.SetDefault:
		return sql.ForeignKeyReferentialAction_SetDefault
	}
	return sql.ForeignKeyReferentialAction_DefaultAction
}
