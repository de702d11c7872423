//go:build race

package dom

const raceEnabled = true
