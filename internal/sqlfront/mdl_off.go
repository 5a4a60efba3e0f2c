//go:build nomdl

package sqlfront

// mdlEnabled is false in a build for measuring the cost of metadata locks
// (mdl_on.go).
const mdlEnabled = false
