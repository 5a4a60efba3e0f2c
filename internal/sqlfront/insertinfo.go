package sqlfront

import (
	"fmt"
	"strconv"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
)

// The info string of an INSERT's or REPLACE's OK packet, as MySQL 8 sends
// it (sql_insert.cc): after a statement with several VALUES rows, or any
// INSERT ... SELECT, "Records: R  Duplicates: D  Warnings: W" — R the rows
// the statement was given, D the rows that met a duplicate (skipped under
// IGNORE: R - inserted; replaced under REPLACE: the rows deleted, affected
// - R), W the statement's warnings. One VALUES row: no info. The mysql CLI
// prints it; PHP's mysqli_info and PyMySQL's message carry it.
//
// go-mysql-server sends none. insertIDIter (insertid.go), which already
// sits above the INSERT's accumulator, sets it; the rows given are counted
// by the convCheck iterator every INSERT's source goes through
// (errcolumn.go). ON DUPLICATE KEY UPDATE is left without an info string:
// its D (rows updated) cannot be told from the affected count when some
// duplicates left their row unchanged, and no counter says it.

// insertInfoMode is how an INSERT's info string is made.
type insertInfoMode uint8

const (
	infoNone    insertInfoMode = iota
	infoPlain                  // D = 0
	infoIgnore                 // D = R - affected
	infoReplace                // D = affected - R
)

// insertInfoModeOf returns how INSERT n's OK packet gets its info string
// (okFixes decides whether it gets one at all).
func insertInfoModeOf(n *plan.InsertInto) insertInfoMode {
	if len(n.OnDupExprs) > 0 {
		return infoNone
	}
	if v := valuesSource(n.Source); v != nil && len(v.ExpressionTuples) <= 1 {
		return infoNone
	}
	switch {
	case n.IsReplace:
		return infoReplace
	case n.Ignore:
		return infoIgnore
	}
	return infoPlain
}

// valuesSource returns the VALUES list an INSERT's source is (under the
// single-child nodes the analyser puts above it), or nil for a SELECT.
func valuesSource(n sql.Node) *plan.Values {
	for n != nil {
		if v, ok := n.(*plan.Values); ok {
			return v
		}
		c := n.Children()
		if len(c) != 1 {
			return nil
		}
		n = c[0]
	}
	return nil
}

// text is MySQL's info string for records rows given, affected rows and
// warnings.
func (m insertInfoMode) text(records, affected uint64, warnings uint16) string {
	var dups uint64
	switch {
	case m == infoIgnore && records > affected:
		dups = records - affected
	case m == infoReplace && affected > records:
		dups = affected - records
	}
	// MySQL's ER_INSERT_INFO text.
	return "Records: " + strconv.FormatUint(records, 10) + "  Duplicates: " + strconv.FormatUint(dups, 10) +
		"  Warnings: " + strconv.FormatUint(uint64(warnings), 10)
}

// infoString is an OkResult's Info.
type infoString string

func (s infoString) String() string { return string(s) }

// IsInsertInfo reports whether an OkResult's Info is the info string
// insertIDIter set (go-mysql-server's own tests expect none there).
func IsInsertInfo(s fmt.Stringer) bool {
	_, ok := s.(infoString)
	return ok
}
