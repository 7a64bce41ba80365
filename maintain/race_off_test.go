//go:build !race

package maintain_test

const raceEnabled = false
