package sqlfront

import (
	"strings"
)

// Statement modifiers go-mysql-server's parser refuses (1064) and that
// change nothing in lockstep:
//
//   - LOW_PRIORITY, HIGH_PRIORITY, DELAYED (INSERT, REPLACE, UPDATE,
//     DELETE, SELECT) and QUICK (DELETE) schedule table locks and index
//     merges of MyISAM-era engines; InnoDB ignores them, and MySQL 8
//     treats INSERT DELAYED as INSERT;
//   - SQL_SMALL_RESULT, SQL_BIG_RESULT, SQL_BUFFER_RESULT (SELECT) are
//     hints to the optimizer's temporary tables;
//   - IGNORE after DELETE (pt-online-schema-change's triggers use it): in
//     MySQL it turns errors met while deleting into warnings and skips the
//     rows — in practice a foreign key that forbids the delete. lockstep
//     drops the word: such a DELETE fails with the error instead (asserted
//     in the differential corpus, dml.sql). It never deletes a row MySQL
//     would keep. UPDATE IGNORE and INSERT IGNORE are go-mysql-server's
//     and stay.
//
// stripModifiers removes them from the statement's text where they follow
// the statement's verb (DELETE, INSERT, REPLACE, UPDATE, SELECT),
// anywhere in the text — a trigger's body included — outside quotes and
// comments. A SELECT's other options (DISTINCT, STRAIGHT_JOIN,
// SQL_NO_CACHE, SQL_CALC_FOUND_ROWS ...) are kept, and the words may come
// in any order among them, as MySQL allows. All the words removed are
// keywords in MySQL, so where they stand they cannot be names.

var verbModifiers = map[string]map[string]bool{
	"delete":  {"low_priority": true, "quick": true, "ignore": true},
	"insert":  {"low_priority": true, "delayed": true, "high_priority": true},
	"replace": {"low_priority": true, "delayed": true},
	"update":  {"low_priority": true},
	"select":  {"high_priority": true, "sql_small_result": true, "sql_big_result": true, "sql_buffer_result": true},
}

// selectKept are SELECT options go-mysql-server parses: a SELECT's
// modifiers may stand among them.
var selectKept = map[string]bool{
	"all": true, "distinct": true, "distinctrow": true, "straight_join": true,
	"sql_no_cache": true, "sql_cache": true, "sql_calc_found_rows": true,
}

// mayHaveModifier is a cheap filter for stripModifiers (one pass over q,
// two more only for a text that says IGNORE).
func mayHaveModifier(q string) bool {
	return containsAnyFold(q, "priority", "delayed", "quick", "_result") ||
		(containsFold(q, "ignore") && containsFold(q, "delete"))
}

// stripModifiers returns q without the modifiers above.
func stripModifiers(q string) string {
	if !mayHaveModifier(q) {
		return q
	}
	words := sqlWords(q)
	var cut [][2]int
	for i := 0; i < len(words); i++ {
		verb := strings.ToLower(q[words[i][0]:words[i][1]])
		mods := verbModifiers[verb]
		if mods == nil {
			continue
		}
		for j := i + 1; j < len(words) && blank(q[words[j-1][1]:words[j][0]]); j++ {
			w := strings.ToLower(q[words[j][0]:words[j][1]])
			switch {
			case mods[w]:
				cut = append(cut, words[j])
			case verb == "select" && selectKept[w]:
			default:
				j = len(words) // the modifiers end here
			}
		}
	}
	if len(cut) == 0 {
		return q
	}
	var b strings.Builder
	last := 0
	for _, c := range cut {
		b.WriteString(q[last:c[0]])
		last = c[1]
	}
	b.WriteString(q[last:])
	return b.String()
}
