package bench

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// largeTxn commits one transaction of c.LargeTxnRows rows: a table
// sbtest.large (a BIGINT key, an INT, two CHAR columns) filled by a
// single INSERT ... SELECT from the cross join of a helper table of
// ceil(sqrt(N)) numbers with itself. It is the log record item 4 of issue
// 31 asks a replay to stream with bounded memory.
func (c *MakeLogConfig) largeTxn(ctx context.Context, db *sql.DB, prog io.Writer) error {
	n := c.LargeTxnRows
	side := int(math.Ceil(math.Sqrt(float64(n))))
	var sb strings.Builder
	sb.WriteString("INSERT INTO sbtest.seq (n) VALUES ")
	for i := 0; i < side; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "(%d)", i)
	}
	for _, q := range []string{
		"CREATE TABLE sbtest.seq (n INT NOT NULL PRIMARY KEY)",
		sb.String(),
		"CREATE TABLE sbtest.large (id BIGINT NOT NULL PRIMARY KEY, k INT NOT NULL, c CHAR(40) NOT NULL, pad CHAR(20) NOT NULL)",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("large transaction: %s: %v", firstWords(q), err)
		}
	}
	q := fmt.Sprintf("INSERT INTO sbtest.large (id, k, c, pad) "+
		"SELECT a.n * %d + b.n + 1, (a.n * 7919 + b.n) %% 100000, CONCAT('large-', a.n, '-', b.n, '-', LPAD(b.n, 12, '0')), LPAD(a.n, 20, 'p') "+
		"FROM sbtest.seq a CROSS JOIN sbtest.seq b WHERE a.n * %d + b.n < %d", side, side, n)
	t0 := time.Now()
	res, err := db.ExecContext(ctx, q)
	if err != nil {
		return fmt.Errorf("large transaction: %v", err)
	}
	if got, err := res.RowsAffected(); err != nil || got != int64(n) {
		return fmt.Errorf("large transaction: %d rows inserted, want %d (%v)", got, n, err)
	}
	fmt.Fprintf(prog, "make-log: one transaction of %d rows in %.2f s\n", n, time.Since(t0).Seconds())
	return nil
}

func firstWords(q string) string {
	if len(q) > 60 {
		return q[:60] + "..."
	}
	return q
}
