//go:build !nomdl

package sqlfront

// mdlEnabled: metadata locks are taken (mdl.go). Built with -tags nomdl
// they are not, for measuring their cost in the same run
// (docs/benchmarks/notes.md).
const mdlEnabled = true
