//go:build unix

package sqlstore

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// processAlive reports whether a process with pid runs on this host and,
// when start is known, started at that time (so a PID reused by another
// program after a crash or a reboot does not keep a lock alive).
func processAlive(pid int, start string) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false // ESRCH: no such process
	}
	if start != "" {
		if now := processStart(pid); now != "" && now != start {
			return false
		}
	}
	return true
}

// processStart returns the start time of process pid as the kernel tells
// it (Linux: field 22 of /proc/PID/stat, in clock ticks since boot), or ""
// when this system does not say.
func processStart(pid int) string {
	if runtime.GOOS != "linux" {
		return ""
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name (field 2) is in parentheses and may hold spaces
	// and parentheses: the fields after it start after the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	fields := strings.Fields(s[i+1:])
	// fields[0] is field 3 (state): field 22 is fields[19].
	if len(fields) < 20 {
		return ""
	}
	return fields[19]
}
