//go:build !nogaplocks

package storage

// gapLocksEnabled: locking reads under REPEATABLE READ take gap and
// next-key locks (gap.go). Built with -tags nogaplocks they take record
// locks only, as READ COMMITTED does, for measuring the cost of gap locks
// in the same run (docs/storage.md, "A build without gap locks").
const gapLocksEnabled = true
