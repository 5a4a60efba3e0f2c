//go:build nogaplocks

package storage

// gapLocksEnabled is false in a build for measuring the cost of gap locks
// (gap_on.go): REPEATABLE READ's locking reads lock records only.
const gapLocksEnabled = false
