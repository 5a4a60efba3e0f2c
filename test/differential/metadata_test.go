package differential

import (
	"fmt"
	"testing"

	"lockstep/internal/testutil"
)

// TestResultMetadataAgainstMariaDB: a computed result column's binary
// collation (63), BINARY_FLAG and NOT_NULL_FLAG as MariaDB sends them
// (MySQL 8 sends the same): numbers and dates are binary, strings are not;
// division, DIV and MOD may be NULL (a zero divisor). lockstep sent `SELECT
// 1/0` as NOT NULL in the connection's collation, and the mysql CLI drew
// its table wrong. The column's type is the corpus's business (and its
// integer width is normalised there); it is not compared here.
func TestResultMetadataAgainstMariaDB(t *testing.T) {
	mdb := startMariaDB(t)
	ls := testutil.StartServer(t)
	const q = "SELECT 1/0, 1/2, 5 DIV 0, 7 MOD 2, 1, 1.5, -2, NOW(), CAST(1 AS DATE), 'a', 1e0, 2 > 1, NULL + 1"
	var got [2][]string
	for i, side := range []struct{ addr, user string }{{ls.Addr, "root"}, {mdb.addr, "diff"}} {
		c, err := dial(side.addr, side.user, "")
		if err != nil {
			t.Fatal(err)
		}
		defer c.close()
		o, err := c.query(q)
		if err != nil || o.err != nil {
			t.Fatalf("%s: %v %v", side.addr, err, o.err)
		}
		for _, col := range o.cols {
			got[i] = append(got[i], fmt.Sprintf("%s: binary collation %v, BINARY %v, NOT NULL %v",
				col.name, col.charset == 63, col.flags&128 != 0, col.flags&1 != 0))
		}
	}
	if len(got[0]) != len(got[1]) {
		t.Fatalf("column counts differ: %d against %d", len(got[0]), len(got[1]))
	}
	for i := range got[0] {
		if got[0][i] != got[1][i] {
			t.Errorf("lockstep %s\n  MariaDB %s", got[0][i], got[1][i])
		}
	}
}
