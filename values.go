package linkrot

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseAge reads an age as the command line and the configuration file
// write it: "90d", "12w" (days and weeks, fractions allowed) or any
// positive time.ParseDuration value ("36h").
func ParseAge(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	for _, u := range []struct {
		suffix string
		unit   time.Duration
	}{{"d", 24 * time.Hour}, {"w", 7 * 24 * time.Hour}} {
		if n, ok := strings.CutSuffix(v, u.suffix); ok {
			f, err := strconv.ParseFloat(n, 64)
			if err != nil || f <= 0 {
				return 0, fmt.Errorf("invalid age %q (use 90d, 12w or 36h)", v)
			}
			return time.Duration(f * float64(u.unit)), nil
		}
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("invalid age %q (use 90d, 12w or 36h)", v)
	}
	return d, nil
}

// ParseSize reads a byte count: a non-negative integer with an optional
// KiB, MiB, GiB (K, M, G) or KB, MB, GB suffix, case-insensitive.
func ParseSize(v string) (int64, error) {
	v = strings.TrimSpace(v)
	mult := int64(1)
	units := []struct {
		suf string
		m   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1000}, {"MB", 1000_000}, {"GB", 1000_000_000}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}}
	for _, u := range units {
		if strings.HasSuffix(strings.ToUpper(v), strings.ToUpper(u.suf)) {
			mult = u.m
			v = strings.TrimSpace(v[:len(v)-len(u.suf)])
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("invalid size %q (use bytes or e.g. 5MiB)", v)
	}
	return n * mult, nil
}
