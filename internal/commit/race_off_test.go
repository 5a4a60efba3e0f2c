//go:build !race

package commit

const raceEnabled = false
