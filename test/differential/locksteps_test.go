package differential

import (
	"fmt"
	"strings"
	"testing"
)

// Two-session LOCK TABLES scenarios, run the same on lockstep and
// MariaDB 10.11 (TestLockTablesDDLAgainstMariaDB,
// TestLockTablesImplicitAgainstMariaDB).

// lockStep is one statement of a scenario and the error it must give.
type lockStep struct {
	b       bool // on the second session (lock_wait_timeout=1)
	sql     string
	want    int // MySQL 8's answer, lockstep's
	mariadb int // MariaDB 10.11's when it differs, else -1
}

// lockA and lockB are a step of the first and the second session;
// lockDiffers records MariaDB's answer where it is not MySQL 8's.
func lockA(q string, want int) lockStep { return lockStep{sql: q, want: want, mariadb: -1} }
func lockB(q string, want int) lockStep { return lockStep{b: true, sql: q, want: want, mariadb: -1} }
func lockDiffers(s lockStep, mariadb int) lockStep {
	s.mariadb = mariadb
	return s
}

type lockScenario struct {
	name  string
	steps []lockStep
}

// runLockScenarios runs each scenario on each side in a database of its
// own (dbPrefix and its number; "%s" in a step names it) holding
// gapSessions' table t and what setup creates.
func runLockScenarios(t *testing.T, sides []server, dbPrefix string, setup []string, scenarios []lockScenario) {
	t.Helper()
	for _, side := range sides {
		for i, sc := range scenarios {
			t.Run(side.name+"/"+sc.name, func(t *testing.T) {
				db := fmt.Sprintf("%s_%d", dbPrefix, i)
				a, b := gapSessions(t, side, db)
				for _, q := range setup {
					if code := gapExec(t, a, q); code != 0 {
						t.Fatalf("%s: error %d", q, code)
					}
				}
				gapExec(t, b, "SET SESSION lock_wait_timeout = 1")
				for _, st := range sc.steps {
					q := strings.ReplaceAll(st.sql, "%s", db)
					c := a
					if st.b {
						c = b
					}
					want := st.want
					if side.name == "mariadb" && st.mariadb >= 0 {
						want = st.mariadb
					}
					if code := gapExec(t, c, q); code != want {
						t.Errorf("%s: error %d, want %d", q, code, want)
					}
				}
				gapExec(t, a, "UNLOCK TABLES")
				gapExec(t, a, "ROLLBACK")
			})
		}
	}
}
