package crawler_test

import (
	"regexp"
	"testing"
)

func mustRe(t *testing.T, s string) *regexp.Regexp {
	t.Helper()
	return regexp.MustCompile(s)
}
