package sqlfront

import (
	"context"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/information_schema"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// The mysql schema as clients see it.
//
// go-mysql-server answers for the database named mysql itself: its
// catalog resolves that name to the accounts (mysql_db.MySQLDb: user, db,
// tables_priv, procs_priv, role_edges, slave_master_info and four help
// tables) before lockstep's provider is asked, and that table list is
// fixed. What MySQL clients expect of it, and what this file adds:
//
//   - information_schema lists the mysql schema's tables and columns (a
//     dump reads both to decide what to dump and which columns to select);
//     go-mysql-server leaves the schema out. Listed to an account that
//     SHOW DATABASES lists it to (dbaccess.go), as MySQL does.
//   - the log tables general_log and slow_log exist (mysqldump asks for
//     their definition first of all, and a dump recreates them with CREATE
//     TABLE IF NOT EXISTS). This server keeps no general or slow log in
//     tables, so they are always empty. go-mysql-server cannot be given
//     tables in mysql, so the parser points a reference to mysql.general_log
//     or mysql.slow_log (or to either with mysql current) at a database
//     lockstep's provider holds under a name no client can write
//     (logTablesDB), which calls itself mysql.
//   - the help tables read as empty (go-mysql-server's return one row with
//     no columns, which fails every SELECT naming a column).
//
// Writes to the account tables — persisted per statement, and a dump's
// DROP TABLE / CREATE TABLE / INSERT sequence — are granttables.go's.

// logTablesDB is the provider's name for the log tables' database. It holds
// a NUL byte, which no identifier a client sends does.
const logTablesDB = "mysql\x00logs"

// logTable is an always-empty log table: its go-mysql-server schema, for
// information_schema and DESCRIBE, and MySQL 8's definition, for SHOW
// CREATE TABLE.
type logTable struct {
	name    string
	sch     sql.Schema
	create  string
	comment string
}

var _ sql.Table = (*logTable)(nil)
var _ sql.CommentedTable = (*logTable)(nil)

func (t *logTable) Name() string               { return t.name }
func (t *logTable) String() string             { return t.name }
func (t *logTable) Schema() sql.Schema         { return t.sch }
func (t *logTable) Collation() sql.CollationID { return sql.Collation_utf8mb3_general_ci }
func (t *logTable) Comment() string            { return t.comment }
func (t *logTable) Partitions(*sql.Context) (sql.PartitionIter, error) {
	return sql.PartitionsToPartitionIter(), nil
}
func (t *logTable) PartitionRows(*sql.Context, sql.Partition) (sql.RowIter, error) {
	return sql.RowsToRowIter(), nil
}

// logTables are general_log and slow_log, shared by every server (they
// are immutable).
var logTables = sync.OnceValue(func() map[string]*logTable {
	col := func(table, name string, typ sql.Type) *sql.Column {
		return &sql.Column{Name: name, Type: typ, Source: table, DatabaseSource: "mysql"}
	}
	ts6 := types.MustCreateDatetimeType(sqltypes.Timestamp, 6)
	str := func(n int64) sql.Type {
		return types.MustCreateString(sqltypes.VarChar, n, sql.Collation_utf8mb3_general_ci)
	}
	text := types.MustCreateString(sqltypes.Text, types.MediumTextBlobMax, sql.Collation_utf8mb3_general_ci)
	g, s := "general_log", "slow_log"
	return map[string]*logTable{
		g: {name: g, sch: sql.Schema{
			col(g, "event_time", ts6), col(g, "user_host", text), col(g, "thread_id", types.Uint64),
			col(g, "server_id", types.Uint32), col(g, "command_type", str(64)), col(g, "argument", types.MediumBlob),
		}, comment: "General log", create: "CREATE TABLE `general_log` (\n" +
			"  `event_time` timestamp(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),\n" +
			"  `user_host` mediumtext NOT NULL,\n" +
			"  `thread_id` bigint unsigned NOT NULL,\n" +
			"  `server_id` int unsigned NOT NULL,\n" +
			"  `command_type` varchar(64) NOT NULL,\n" +
			"  `argument` mediumblob NOT NULL\n" +
			") ENGINE=CSV DEFAULT CHARSET=utf8mb3 COMMENT='General log'"},
		s: {name: s, sch: sql.Schema{
			col(s, "start_time", ts6), col(s, "user_host", text), col(s, "query_time", types.Time),
			col(s, "lock_time", types.Time), col(s, "rows_sent", types.Int32), col(s, "rows_examined", types.Int32),
			col(s, "db", str(512)), col(s, "last_insert_id", types.Int32), col(s, "insert_id", types.Int32),
			col(s, "server_id", types.Uint32), col(s, "sql_text", types.MediumBlob), col(s, "thread_id", types.Uint64),
		}, comment: "Slow log", create: "CREATE TABLE `slow_log` (\n" +
			"  `start_time` timestamp(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),\n" +
			"  `user_host` mediumtext NOT NULL,\n" +
			"  `query_time` time(6) NOT NULL,\n" +
			"  `lock_time` time(6) NOT NULL,\n" +
			"  `rows_sent` int NOT NULL,\n" +
			"  `rows_examined` int NOT NULL,\n" +
			"  `db` varchar(512) NOT NULL,\n" +
			"  `last_insert_id` int NOT NULL,\n" +
			"  `insert_id` int NOT NULL,\n" +
			"  `server_id` int unsigned NOT NULL,\n" +
			"  `sql_text` mediumblob NOT NULL,\n" +
			"  `thread_id` bigint unsigned NOT NULL\n" +
			") ENGINE=CSV DEFAULT CHARSET=utf8mb3 COMMENT='Slow log'"},
	}
})

// logTablesDatabase is the database the parser points log-table
// references at. It calls itself mysql (in messages, information_schema
// and privilege checks). CREATE TABLE of a log table finds it there (so
// that IF NOT EXISTS succeeds); nothing else can be created or dropped.
type logTablesDatabase struct{}

var _ sql.TableCreator = logTablesDatabase{}
var _ sql.AliasedDatabase = logTablesDatabase{}

func (logTablesDatabase) Name() string        { return "mysql" }
func (logTablesDatabase) AliasedName() string { return "mysql" }
func (logTablesDatabase) GetTableInsensitive(_ *sql.Context, name string) (sql.Table, bool, error) {
	t, ok := logTables()[strings.ToLower(name)]
	if !ok {
		return nil, false, nil
	}
	return t, true, nil
}
func (logTablesDatabase) GetTableNames(*sql.Context) ([]string, error) {
	return []string{"general_log", "slow_log"}, nil
}
func (logTablesDatabase) CreateTable(_ *sql.Context, name string, _ sql.PrimaryKeySchema, _ sql.CollationID, _ string) error {
	if _, ok := logTables()[strings.ToLower(name)]; ok {
		return sql.ErrTableAlreadyExists.New(name)
	}
	return sql.ErrCreateTableNotSupported.New("mysql")
}

// The database has no views (go-mysql-server asks it for one of the
// table's name before it looks for the table).
var _ sql.ViewDatabase = logTablesDatabase{}

func (logTablesDatabase) CreateView(*sql.Context, string, string, string) error {
	return sql.ErrCreateTableNotSupported.New("mysql")
}
func (logTablesDatabase) DropView(_ *sql.Context, name string) error {
	return sql.ErrViewDoesNotExist.New("mysql", name)
}
func (logTablesDatabase) GetViewDefinition(*sql.Context, string) (sql.ViewDefinition, bool, error) {
	return sql.ViewDefinition{}, false, nil
}
func (logTablesDatabase) AllViews(*sql.Context) ([]sql.ViewDefinition, error) { return nil, nil }

// mayNameLogTable is a cheap test that query might name a log table; it
// runs for every statement parsed (one scan unless the text has "_log").
func mayNameLogTable(query string) bool {
	return containsFold(query, "_log") && (containsFold(query, "general_log") || containsFold(query, "slow_log"))
}

// redirectLogTables points stmt's references to mysql.general_log and
// mysql.slow_log (qualified, or unqualified with mysql current) at
// logTablesDB: in FROM and JOIN, SHOW (CREATE TABLE, COLUMNS, INDEX),
// DESCRIBE and CREATE TABLE.
func redirectLogTables(ctx context.Context, stmt ast.Statement) {
	current := ""
	if sctx, ok := ctx.(*sql.Context); ok {
		current = sctx.GetCurrentDatabase()
	}
	redirect := func(tn *ast.TableName) {
		if _, ok := logTables()[strings.ToLower(tn.Name.String())]; !ok {
			return
		}
		db := tn.DbQualifier.String()
		if db == "" {
			db = current
		}
		if strings.EqualFold(db, "mysql") {
			tn.DbQualifier = ast.NewTableIdent(logTablesDB)
		}
	}
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *ast.AliasedTableExpr:
			if tn, ok := n.Expr.(ast.TableName); ok {
				redirect(&tn)
				n.Expr = tn
			}
		case *ast.Show:
			redirect(&n.Table)
		case *ast.DDL:
			if n.Action == ast.CreateStr {
				redirect(&n.Table)
			}
		}
		return true, nil
	}, stmt)
}

// mysqlSchemaListed is the mysql schema as information_schema lists it:
// the account tables and the log tables.
type mysqlSchemaListed struct {
	*mysql_db.MySQLDb
}

func (m mysqlSchemaListed) GetTableNames(ctx *sql.Context) ([]string, error) {
	names, err := m.MySQLDb.GetTableNames(ctx)
	if err != nil {
		return nil, err
	}
	names = append(append([]string(nil), names...), "general_log", "slow_log")
	sort.Strings(names)
	return names, nil
}

func (m mysqlSchemaListed) GetTableInsensitive(ctx *sql.Context, name string) (sql.Table, bool, error) {
	t, ok, err := m.MySQLDb.GetTableInsensitive(ctx, name)
	if err != nil || !ok {
		return logTablesDatabase{}.GetTableInsensitive(ctx, name)
	}
	// go-mysql-server's procs_priv says its Timestamp column is
	// tables_priv's, and information_schema.COLUMNS, which finds a
	// table's columns by their source, then listed one column of
	// tables_priv.
	for _, c := range t.Schema() {
		if c.Source != t.Name() {
			sch := t.Schema().Copy()
			for _, c := range sch {
				c.Source = t.Name()
			}
			return ownSourceTable{Table: t, sch: sch}, true, nil
		}
	}
	return t, true, nil
}

// ownSourceTable is t with its schema's source names corrected.
type ownSourceTable struct {
	sql.Table
	sch sql.Schema
}

func (t ownSourceTable) Schema() sql.Schema { return t.sch }

// listMySQLSchema makes information_schema list the mysql schema. The
// hook is go-mysql-server's package variable (every information_schema
// table lists databases through it); the replacement keeps no state of
// its own — it finds the accounts through the catalog it is given — so
// servers in one process do not share anything through it.
var listMySQLSchema = sync.OnceFunc(func() {
	all := information_schema.AllDatabasesWithNames
	information_schema.AllDatabasesWithNames = func(ctx *sql.Context, cat sql.Catalog, privCheck bool) ([]information_schema.DbWithNames, error) {
		dbs, err := all(ctx, cat, privCheck)
		if err != nil {
			return nil, err
		}
		c, ok := cat.(*analyzer.Catalog)
		if !ok || c.MySQLDb == nil || !c.MySQLDb.Enabled() {
			return dbs, nil
		}
		if ps := c.MySQLDb.UserActivePrivilegeSet(ctx); !mayListDatabase(ps, "mysql") { // dbaccess.go
			return dbs, nil
		}
		for _, d := range dbs {
			if strings.EqualFold(d.SchemaName, "mysql") {
				return dbs, nil
			}
		}
		dbs = append(dbs, information_schema.DbWithNames{Database: mysqlSchemaListed{c.MySQLDb}, CatalogName: "def", SchemaName: "mysql"})
		sort.SliceStable(dbs, func(i, j int) bool { return dbs[i].SchemaName < dbs[j].SchemaName })
		return dbs, nil
	}
})

// helpTable reports whether rt is one of go-mysql-server's help tables.
// It runs for every table a plan reads: the database is tested first.
func helpTable(rt *plan.ResolvedTable) bool {
	name := rt.Name()
	return accountsDB(rt.SqlDatabase) != nil && len(name) > 5 && strings.EqualFold(name[:5], "help_")
}

// accountsDB is db as go-mysql-server's mysql database (nil if it is not).
func accountsDB(db sql.Database) *mysql_db.MySQLDb {
	if p, ok := db.(mysql_db.PrivilegedDatabase); ok {
		db = p.Unwrap()
	}
	m, _ := db.(*mysql_db.MySQLDb)
	return m
}

// showCreateMySQLTable is SHOW CREATE TABLE of a table of the mysql
// schema (nil, nil for any other table): MySQL 8's definition of a log
// table, and go-mysql-server's of an account table with its defaults
// printed as MySQL prints them (go-mysql-server prints DEFAULT '1' for
// DEFAULT 'N', which CREATE TABLE refuses, so a dump could not be
// reloaded).
func showCreateMySQLTable(ctx *sql.Context, n *plan.ShowCreateTable, rt *plan.ResolvedTable, row sql.Row) (sql.RowIter, error) {
	if lt, ok := underlying(rt.Table).(*logTable); ok {
		return sql.RowsToRowIter(sql.NewRow(lt.name, lt.create)), nil
	}
	if accountsDB(rt.SqlDatabase) == nil {
		return nil, nil
	}
	sch := rt.Schema()
	return rewriteCreateTable(ctx, n, row, func(s string) string { return literalDefaults(ctx, sch, s) })
}

// literalDefaults rewrites, in the CREATE TABLE text create, the DEFAULT
// of each column whose default is a literal go-mysql-server prints in a
// form CREATE TABLE refuses — an ENUM's or SET's as its index or bits, a
// TIMESTAMP's as Go's time — to MySQL's literal. (The account tables'
// columns end with their DEFAULT clause.)
func literalDefaults(ctx *sql.Context, sch sql.Schema, create string) string {
	lines := strings.Split(create, "\n")
	for _, col := range sch {
		if col.Default == nil || !col.Default.IsLiteral() {
			continue
		}
		v, err := col.Default.Eval(ctx, nil)
		if err != nil || v == nil {
			continue
		}
		var lit string
		switch t := col.Type.(type) {
		case sql.EnumType:
			idx, ok := v.(uint16)
			if !ok {
				continue
			}
			if lit, ok = t.At(int(idx)); !ok {
				continue
			}
		case sql.SetType:
			bits, ok := v.(uint64)
			if !ok {
				continue
			}
			if lit, err = t.BitsToString(bits); err != nil {
				continue
			}
		default:
			tm, ok := v.(time.Time)
			if !ok {
				continue
			}
			lit = tm.UTC().Format("2006-01-02 15:04:05")
		}
		prefix := "  `" + col.Name + "` "
		for i, l := range lines {
			at := strings.Index(l, " DEFAULT ")
			if !strings.HasPrefix(l, prefix) || at < 0 {
				continue
			}
			end := ""
			if strings.HasSuffix(l, ",") {
				end = ","
			}
			lines[i] = l[:at] + " DEFAULT '" + strings.ReplaceAll(lit, "'", "''") + "'" + end
		}
	}
	return strings.Join(lines, "\n")
}
