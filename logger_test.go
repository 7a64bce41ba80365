package linkrot

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
)

func TestNewLogger(t *testing.T) {
	var b strings.Builder
	log, err := NewLogger(&b, "json", slog.LevelInfo)
	if err != nil {
		t.Fatal(err)
	}
	log.Debug("hidden")
	log.Info("fetch", "url", "https://user:secret@example.org/")
	if strings.Contains(b.String(), "hidden") || strings.Contains(b.String(), "secret") || !strings.HasPrefix(b.String(), "{") {
		t.Errorf("log = %q", b.String())
	}
	var se *SettingsError
	if _, err := NewLogger(&b, "xml", slog.LevelInfo); !errors.As(err, &se) {
		t.Errorf("format xml: %v", err)
	}
}
