//go:build race

package maintain_test

// raceEnabled: the race detector multiplies RSS (shadow memory), so
// TestLoad bounds the Go runtime's memory instead.
const raceEnabled = true
