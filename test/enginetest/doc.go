// Package enginetest runs go-mysql-server's own engine test suites
// (github.com/dolthub/go-mysql-server/enginetest) against lockstep.
//
// The harness (harness_test.go) builds a fresh sqlfront.Frontend for every
// engine the suites ask for and runs the suites' setup scripts through it,
// so every table lives in lockstep storage and every query runs in a
// lockstep session. Known failures are listed, each with its reason, in
// skiplist_test.go (generated from the rules in summary/rules.go). See
// docs/enginetest.md for how to run the suites and for the latest per-suite
// counts.
package enginetest
