package sqlfront

import (
	"context"
	"regexp"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// A trigger belongs to its table, as in MySQL: RENAME TABLE (and ALTER
// TABLE ... RENAME) takes the table's triggers along. lockstep keeps a
// trigger as its CREATE TRIGGER text, and go-mysql-server finds a table's
// triggers by the table name in that text, so a renamed table's triggers
// stayed with the old name: SHOW TRIGGERS and information_schema.TRIGGERS
// failed with 1146 until a table took that name, and then fired on it —
// pt-online-schema-change's swap left the old table's triggers on the new
// one, writing into a table that no longer existed. RenameTable rewrites
// the ON clause of the triggers it moves. (DROP TABLE drops the table's
// triggers already: go-mysql-server's plan names them.)

// triggerOn is the table a trigger definition fires on ("" if its text
// does not parse).
func triggerOn(def *sql.TriggerDefinition) string {
	// Parsed as it was created: under ANSI_QUOTES, ON "t" names a table.
	opts := ast.ParserOptions{AnsiQuotes: strings.Contains(strings.ToUpper(def.SqlMode), "ANSI_QUOTES")}
	st, err := ast.ParseWithOptions(context.Background(), def.CreateStatement, opts)
	if err != nil {
		return ""
	}
	ddl, ok := st.(*ast.DDL)
	if !ok || ddl.TriggerSpec == nil {
		return ""
	}
	return ddl.Table.Name.String()
}

// triggerOnClause finds the ON table clause of a CREATE TRIGGER head.
var triggerOnClause = regexp.MustCompile("(?is)\\bon\\s+((?:`(?:[^`]|``)+`|[\\w$]+)(?:\\s*\\.\\s*(?:`(?:[^`]|``)+`|[\\w$]+))?)\\s+for\\s+each\\s+row\\b")

// retarget returns def firing on table instead (its text's ON clause
// rewritten); ok is false if the clause is not found.
func retarget(def sql.TriggerDefinition, table string) (sql.TriggerDefinition, bool) {
	text := def.CreateStatement
	head := text
	if st, err := ast.Parse(text); err == nil {
		if ddl, ok := st.(*ast.DDL); ok && ddl.SubStatementPositionStart > 0 && ddl.SubStatementPositionStart <= len(text) {
			head = text[:ddl.SubStatementPositionStart] // the body may say "on ... for each row" too
		}
	}
	m := triggerOnClause.FindStringSubmatchIndex(head)
	if m == nil {
		return def, false
	}
	def.CreateStatement = text[:m[2]] + QuoteIdent(table) + text[m[3]:]
	return def, true
}

// moveTriggers makes the triggers on from fire on to; d.mu is held.
func (d *Database) moveTriggers(from, to string) {
	for i := range d.triggers {
		if strings.EqualFold(triggerOn(&d.triggers[i]), from) {
			if moved, ok := retarget(d.triggers[i], to); ok {
				d.triggers[i] = moved
				d.trigGen++
			}
		}
	}
}

// triggerTable is the table trigger name fires on, "" if there is no such
// trigger (DROP TRIGGER's metadata lock, mdl.go).
func (d *Database) triggerTable(_ *sql.Context, name string) string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if i := indexNamed(d.triggers, name, triggerName); i >= 0 {
		return triggerOn(&d.triggers[i])
	}
	return ""
}
