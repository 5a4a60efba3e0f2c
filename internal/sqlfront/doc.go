// Package sqlfront connects go-mysql-server (parsing, planning, execution,
// the MySQL wire protocol) to lockstep's storage engine. It owns the
// catalog the SQL layer sees (databases, tables, indexes) and each table's
// storage descriptor built from it (rows and keys are encoded by
// internal/storage/rowenc), sessions and their transactions, the mapping of engine errors to
// MySQL error codes, lockstep's system variables and status variables.
//
// It does not own versions, locks or commit: those are internal/storage and
// internal/txn. It does not own the listener or process lifecycle
// (internal/server).
package sqlfront
