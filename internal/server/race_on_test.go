//go:build race

package server

// raceEnabled: the tests run with -race.
const raceEnabled = true
