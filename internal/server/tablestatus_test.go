package server

import (
	gosql "database/sql"
	"testing"
)

// TestShowTableStatus: SHOW TABLE STATUS gives a table's next
// AUTO_INCREMENT value (go-mysql-server: NULL) and NULL for a table
// without one, and InnoDB's row format Dynamic (it said Fixed), with the
// database named or current.
func TestShowTableStatus(t *testing.T) {
	s := startInProcess(t, nil)
	s.exec(t, "CREATE DATABASE ts")
	s.exec(t, "CREATE TABLE ts.a (id INT AUTO_INCREMENT PRIMARY KEY, v INT)")
	s.exec(t, "CREATE TABLE ts.plain (id INT PRIMARY KEY)")
	s.exec(t, "INSERT INTO ts.a (v) VALUES (1), (2), (3)")
	for _, q := range []string{"SHOW TABLE STATUS FROM ts", "SHOW TABLE STATUS IN `ts` LIKE '%'"} {
		rows, err := s.db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		got := map[string][2]string{}
		for rows.Next() {
			vals := make([]gosql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			auto := "NULL"
			if vals[10].Valid {
				auto = vals[10].String
			}
			got[vals[0].String] = [2]string{vals[3].String, auto}
		}
		rows.Close()
		if got["a"] != [2]string{"Dynamic", "4"} || got["plain"] != [2]string{"Dynamic", "NULL"} {
			t.Errorf("%s: %v, want a Dynamic/4 and plain Dynamic/NULL", q, got)
		}
	}
}
