//go:build race

package commit

const raceEnabled = true
