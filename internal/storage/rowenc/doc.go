// Package rowenc is lockstep's row and key encoding: how a row of SQL values
// becomes the bytes storage keeps (EncodeRow, DecodeRow), and how column
// values become memcomparable index keys (KeyColumn, AppendKey).
//
// Both encodings are durable: rows and keys are in existing logs and
// checkpoints, so a change to either is a change of the on-disk format
// (testdata/keys.golden in internal/sqlfront pins them byte for byte).
//
// The package lives under storage because storage computes index keys
// itself, from a table's descriptor (storage.TableDesc), when it indexes,
// undoes, purges, recovers and applies rows — without the SQL layer. It
// imports go-mysql-server's sql and sql/types packages, for two reasons:
// rows hold exactly the Go values the SQL layer works with (sql.Row of
// int8..uint64, decimal.Decimal, time.Time, types.Timespan, JSON
// documents), so decoding hands back what was encoded without a
// conversion; and string keys are built from the collation's weights
// (sql.CollationID.Sorter, PadAttribute), which are go-mysql-server's
// collation tables. It imports nothing else of the SQL layer: no planner,
// no catalog, no session.
package rowenc
