package bench

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"

	"lockstep/internal/sqlfront"
)

// TableChecksum is one table's content summary: its row count and an
// order-independent checksum (the sum of CRC32 of each row's columns
// joined as text, NULL as \N), computed by the server in SQL so that a
// source reached over the protocol and a replayed engine in process are
// summed by the same code.
type TableChecksum struct {
	Table    string // db.table
	Rows     string
	Checksum string
}

// querier runs a query and returns its rows as the protocol's text.
type querier func(q string) ([][]string, error)

// Checksums returns the checksum of every base table outside the system
// schemas, ordered by name.
func checksums(q querier) ([]TableChecksum, error) {
	tabs, err := q("SELECT table_schema, table_name FROM information_schema.tables " +
		"WHERE table_schema NOT IN ('information_schema', 'mysql', 'performance_schema', 'sys') AND table_type = 'BASE TABLE' ORDER BY 1, 2")
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	var out []TableChecksum
	for _, t := range tabs {
		db, name := t[0], t[1]
		cols, err := q(fmt.Sprintf("SELECT column_name FROM information_schema.columns WHERE table_schema = '%s' AND table_name = '%s' ORDER BY ordinal_position",
			strings.ReplaceAll(db, "'", "''"), strings.ReplaceAll(name, "'", "''")))
		if err != nil {
			return nil, fmt.Errorf("columns of %s.%s: %w", db, name, err)
		}
		parts := make([]string, len(cols))
		for i, c := range cols {
			parts[i] = fmt.Sprintf("COALESCE(CAST(%s AS CHAR), '\\\\N')", quoteIdent(c[0]))
		}
		rows, err := q(fmt.Sprintf("SELECT COUNT(*), CAST(COALESCE(SUM(CRC32(CONCAT_WS('#', %s))), 0) AS CHAR) FROM %s.%s",
			strings.Join(parts, ", "), quoteIdent(db), quoteIdent(name)))
		if err != nil {
			return nil, fmt.Errorf("checksum of %s.%s: %w", db, name, err)
		}
		if len(rows) != 1 || len(rows[0]) != 2 {
			return nil, fmt.Errorf("checksum of %s.%s: %d rows", db, name, len(rows))
		}
		out = append(out, TableChecksum{Table: db + "." + name, Rows: rows[0][0], Checksum: rows[0][1]})
	}
	return out, nil
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// dbQuerier queries a server over the protocol.
func dbQuerier(ctx context.Context, db *sql.DB) querier {
	return func(q string) ([][]string, error) {
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			return nil, err
		}
		var out [][]string
		for rows.Next() {
			raw := make([]sql.RawBytes, len(cols))
			dest := make([]any, len(cols))
			for i := range raw {
				dest[i] = &raw[i]
			}
			if err := rows.Scan(dest...); err != nil {
				return nil, err
			}
			row := make([]string, len(cols))
			for i, b := range raw {
				if b == nil {
					row[i] = "NULL"
				} else {
					row[i] = string(b)
				}
			}
			out = append(out, row)
		}
		return out, rows.Err()
	}
}

// localQuerier queries an engine in process; values are converted to the
// protocol's text by their column types.
func localQuerier(fe *sqlfront.Frontend) querier {
	return func(q string) ([][]string, error) {
		ctx := fe.NewLocalContext(context.Background()).WithQuery(q)
		if err := gms.SessionCommandBegin(ctx.Session); err != nil {
			return nil, err
		}
		defer gms.SessionCommandEnd(ctx.Session)
		sch, iter, _, err := fe.Engine.Query(ctx, q)
		if err != nil {
			return nil, err
		}
		rows, err := gms.RowIterToRows(ctx, iter)
		if err != nil {
			return nil, err
		}
		out := make([][]string, len(rows))
		for r, row := range rows {
			out[r] = make([]string, len(row))
			for i, v := range row {
				if v == nil {
					out[r][i] = "NULL"
					continue
				}
				sv, err := sch[i].Type.SQL(ctx, nil, v)
				if err != nil {
					return nil, err
				}
				out[r][i] = sv.ToString()
			}
		}
		return out, nil
	}
}

// ServerChecksums returns the checksum of every base table outside the
// system schemas of the server db reaches, as the replay and the log
// generator compute them (a crash test compares a restarted server with
// the generator's source file).
func ServerChecksums(ctx context.Context, db *sql.DB) ([]TableChecksum, error) {
	return checksums(dbQuerier(ctx, db))
}
