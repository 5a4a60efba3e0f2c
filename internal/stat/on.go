//go:build !nocounters

package stat

// On reports whether statistics counters are updated (false under the
// nocounters build tag).
const On = true
