package sqlfront

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// Default collation.
//
// MySQL 8 creates databases, and so tables and columns, with
// collation_server, whose default is utf8mb4_0900_ai_ci: accent- and
// case-insensitive, so WHERE name = 'alice' finds 'Alice' and a UNIQUE key
// refuses both. go-mysql-server's registry says utf8mb4_0900_bin (its
// sql.Collation_Default). lockstep defines collation_server and
// collation_connection with MySQL's default and a per-server global value
// (Options.CollationServer sets it; the go-mysql-server engine tests keep
// their binary default that way).
//
// What a database is created with must not change when recovery replays
// its CREATE DATABASE: index keys of its string columns are built from the
// collation's weights. So the DDL log carries the session's
// collation_server with every statement (collationMark), and replay runs
// the statement under it; a statement logged before lockstep carried it
// replays under utf8mb4_0900_bin, the default it ran under. Checkpoints
// need nothing: SHOW CREATE DATABASE / TABLE name their collations.

// DefaultCollation is MySQL 8's collation_server.
const DefaultCollation = "utf8mb4_0900_ai_ci"

// legacyCollation is the collation_server of DDL records logged without a
// collation mark.
const legacyCollation = "utf8mb4_0900_bin"

// collationVariable defines a collation variable with MySQL 8's default
// and a per-server global value.
func collationVariable(name string) *serverVar {
	return perServer(&sql.MysqlSystemVariable{
		Name:          name,
		Scope:         sql.GetMysqlScope(sql.SystemVariableScope_Both),
		Dynamic:       true,
		Type:          types.NewSystemStringType(name),
		Default:       DefaultCollation,
		NotifyChanged: checkCollation,
	})
}

// checkCollation refuses a collation go-mysql-server does not know, as its
// own definition does (ER_UNKNOWN_COLLATION).
func checkCollation(_ *sql.Context, _ sql.SystemVariableScope, v sql.SystemVarValue) error {
	s, ok := v.Val.(string)
	if !ok {
		return fmt.Errorf("collation variables expect a string, not %T", v.Val)
	}
	_, err := sql.ParseCollation("", s, false)
	return err
}

// collationMarkPrefix starts the mark logged before a DDL statement's text:
// "/* lockstep: collation_server=NAME */ ".
const collationMarkPrefix = "/* lockstep: collation_server="

func collationMark(name string) string { return collationMarkPrefix + name + " */ " }

// sessionCollationServer is the session's collation_server.
func sessionCollationServer(ctx *sql.Context) string {
	v, err := ctx.GetSessionVariable(ctx, "collation_server")
	if s, ok := v.(string); err == nil && ok && s != "" {
		return s
	}
	return DefaultCollation
}

// cutCollationMark removes a collation mark from the start of logged and
// returns the collation it names ("" when there is none).
func cutCollationMark(logged string) (rest, collation string) {
	after, ok := strings.CutPrefix(logged, collationMarkPrefix)
	if !ok {
		return logged, ""
	}
	name, rest, ok := strings.Cut(after, " */ ")
	if !ok || name == "" || strings.ContainsAny(name, " */") {
		return logged, ""
	}
	return rest, name
}
