package sqlfront

import (
	"fmt"
	"io"

	"github.com/dolthub/go-mysql-server/sql"
)

// safeStats is go-mysql-server's statistics provider (memory.StatsProv)
// made safe for ANALYZE TABLE of an empty table: it builds a histogram
// from a sample of the rows and divides by the sample's size, so ANALYZE
// TABLE of a table without rows panicked (1105 "handler caught panic:
// integer divide by zero"; `mysqlcheck --analyze` fails on the first
// empty table). A table without rows gets no statistics, which is what
// the provider holds for a table never analyzed; a failure inside the
// provider (a table emptied between the check and the sample) is an error,
// not a panic.
type safeStats struct {
	sql.StatsProvider
}

func (s safeStats) AnalyzeTable(ctx *sql.Context, table sql.Table, db string) (err error) {
	empty, err := tableEmpty(ctx, table)
	if err != nil || empty {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("ANALYZE TABLE %s.%s: statistics not computed: %v", db, table.Name(), r)
		}
	}()
	return s.StatsProvider.AnalyzeTable(ctx, table, db)
}

// tableEmpty reports whether table has no row visible to ctx's
// transaction, reading at most one.
func tableEmpty(ctx *sql.Context, table sql.Table) (bool, error) {
	parts, err := table.Partitions(ctx)
	if err != nil {
		return false, err
	}
	defer parts.Close(ctx)
	for {
		p, err := parts.Next(ctx)
		if err == io.EOF {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		rows, err := table.PartitionRows(ctx, p)
		if err != nil {
			return false, err
		}
		_, err = rows.Next(ctx)
		rows.Close(ctx)
		if err == nil {
			return false, nil
		}
		if err != io.EOF {
			return false, err
		}
	}
}
