package sqlfront

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// warningCodes are the conditions MySQL reports at level Warning when a
// statement goes on past them (INSERT IGNORE, UPDATE IGNORE, lenient
// conversions). go-mysql-server files them all as Notes; MySQL keeps Note
// for things like "database exists" under IF NOT EXISTS.
var warningCodes = map[uint16]bool{
	1048: true, // ER_BAD_NULL_ERROR
	1062: true, // ER_DUP_ENTRY
	1242: true, // ER_SUBQUERY_NO_1_ROW
	1264: true, // ER_WARN_DATA_OUT_OF_RANGE
	1265: true, // WARN_DATA_TRUNCATED
	1292: true, // ER_TRUNCATED_WRONG_VALUE
	1366: true, // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD
	1406: true, // ER_DATA_TOO_LONG
	1451: true, // ER_ROW_IS_REFERENCED_2
	1452: true, // ER_NO_REFERENCED_ROW_2
}

// Warn records a warning as MySQL would show it: the level MySQL uses for
// its code, and MySQL's own message where go-mysql-server words it
// differently.
func (s *Session) Warn(w *sql.Warning) {
	if w != nil {
		if c, ok := s.conversionWarning(w); ok {
			w = &c
		}
		level := w.Level
		if level == "Note" && warningCodes[uint16(w.Code)] {
			level = "Warning"
		}
		if msg := mysqlWarningMessage(w.Code, w.Message); level != w.Level || msg != w.Message {
			c := *w
			c.Level, c.Message = level, msg
			w = &c
		}
	}
	s.BaseSession.Warn(w)
}

// mysqlWarningMessage rewrites go-mysql-server's text for a condition into
// MySQL's: "Duplicate entry '1' for key 't.PRIMARY'" without a prefix,
// "Column 'v' cannot be null", and "Can't drop database 'd'; database
// doesn't exist" with the name quoted and no space at the end (DROP
// DATABASE IF EXISTS of none). Other messages are kept.
func mysqlWarningMessage(code int, msg string) string {
	switch code {
	case 1008:
		if rest, ok := strings.CutPrefix(msg, "Can't drop database "); ok {
			if name, ok := strings.CutSuffix(strings.TrimSpace(rest), "; database doesn't exist"); ok && !strings.HasPrefix(name, "'") {
				return "Can't drop database '" + name + "'; database doesn't exist"
			}
		}
	case 1062:
		if i := strings.Index(msg, "Duplicate entry "); i > 0 {
			return msg[i:]
		}
	case 1048:
		const pre = "column name '"
		if rest, ok := strings.CutPrefix(msg, pre); ok {
			if col, _, ok := strings.Cut(rest, "'"); ok {
				return "Column '" + col + "' cannot be null"
			}
		}
	}
	return msg
}

// ClearWarnings starts a new statement's diagnostics, remembering how many
// conditions the previous statement raised for @@warning_count.
func (s *Session) ClearWarnings() {
	ws := s.BaseSession.Warnings()
	s.lastWarnings, s.lastErrors = int64(len(ws)), 0
	for _, w := range ws {
		if w.Level == "Error" {
			s.lastErrors++
		}
	}
	s.BaseSession.ClearWarnings()
	s.cleared = true
}

// GetSessionVariable serves @@warning_count from the diagnostics of the
// previous statement and the global-only per-server variables from this
// server (servervars.go); everything else is go-mysql-server's.
func (s *Session) GetSessionVariable(ctx *sql.Context, name string) (interface{}, error) {
	if strings.EqualFold(name, "warning_count") {
		return s.lastWarnings, nil
	}
	if strings.EqualFold(name, "error_count") {
		return s.lastErrors, nil
	}
	if def := ownedVar(name); def != nil && def.Scope.Type == sql.SystemVariableScope_Global {
		v, _ := s.fe.GlobalVariable(name) // a global-only variable: this server's value
		return v, nil
	}
	return s.BaseSession.GetSessionVariable(ctx, name)
}

// GetAllSessionVariables is SHOW [SESSION] VARIABLES: go-mysql-server's
// session values, with this server's values of its global-only variables.
func (s *Session) GetAllSessionVariables() map[string]any {
	m := s.BaseSession.GetAllSessionVariables()
	for k, v := range s.fe.ownGlobals(true) {
		m[k] = v
	}
	return m
}

// warningOrderRuleID names warningOrderRule among the analyzer's rules.
const warningOrderRuleID analyzer.RuleId = 1<<20 + 15

// warningOrderRule: SHOW WARNINGS lists the conditions in the order they
// were raised, as MySQL does. go-mysql-server's session hands them out
// newest first (its Session.Warnings), so a statement with two warnings
// showed them backwards; the node holds the list, and this rule puts it in
// order once, after analysis. (LIMIT then takes the first raised.)
func warningOrderRule(_ *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		sw, ok := n.(plan.ShowWarnings)
		if !ok || len(sw) < 2 {
			return n, transform.SameTree, nil
		}
		out := make(plan.ShowWarnings, len(sw))
		for i, w := range sw {
			out[len(sw)-1-i] = w
		}
		return out, transform.NewTree, nil
	})
}
