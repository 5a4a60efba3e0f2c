package enginetest

// knownFailures lists, grouped by cause, every go-mysql-server enginetest
// query / statement / script name that fails against lockstep. Keys are
// exact texts as the suites pass them to SkipQueryTest. A skipped setup
// statement or script name skips the whole script.
var knownFailures = []skipGroup{}
