//go:build race

package testutil

// raceEnabled: the tests run with -race, so the server binary is built with it too.
const raceEnabled = true
