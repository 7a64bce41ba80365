//go:build !unix

package sqlstore

import "os"

// processAlive reports whether a process with pid may run on this host.
// Without a portable way to probe it, a process found by os.FindProcess
// counts as alive.
func processAlive(pid int, _ string) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}

// processStart is unknown on this system.
func processStart(int) string { return "" }
