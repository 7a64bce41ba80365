package demo

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFreshDatabase(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"linkrot.db", "linkrot.db-wal", "keep.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db, err := FreshDatabase(dir)
	if err != nil || db != filepath.Join(dir, "linkrot.db") {
		t.Fatalf("%q, %v", db, err)
	}
	for f, exists := range map[string]bool{"linkrot.db": false, "linkrot.db-wal": false, "keep.txt": true} {
		if _, err := os.Stat(filepath.Join(dir, f)); (err == nil) != exists {
			t.Errorf("%s exists: %v, want %v", f, err == nil, exists)
		}
	}
	if _, err := FreshDatabase(filepath.Join(dir, "new")); err != nil {
		t.Errorf("a new directory: %v", err)
	}
}
