package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkrot/linkrot"
)

// TestCheckMaxBodyLimit: --check-max-body above 64 MiB is a usage error
// (HTML parsing costs many times the body read), 64 MiB itself is fine.
func TestCheckMaxBodyLimit(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "none.db")
	for _, v := range []string{"100MiB", "64MiB"} {
		s := &linkrot.Settings{PerHost: 1, Check: linkrot.CheckSettings{Workers: 1}}
		if err := (*sizeFlag)(&s.Check.MaxBody).Set(v); err != nil {
			t.Fatal(err)
		}
		err := s.Validate(linkrot.OpenOptions{CheckOnly: true})
		var se *linkrot.SettingsError
		if got := errors.As(err, &se); got != (v == "100MiB") {
			t.Errorf("--check-max-body %s: %v", v, err)
		}
	}
	code, _, stderr := run(t, "", "check", "--db", dbPath, "--check-max-body", "1GiB")
	if code != exitUsage || !strings.Contains(stderr, "64MiB") {
		t.Errorf("check --check-max-body 1GiB: exit %d (%s), want %d", code, stderr, exitUsage)
	}
}
