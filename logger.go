package linkrot

import (
	"io"
	"log/slog"

	"github.com/linkrot/linkrot/urls"
)

// NewLogger returns a run logger on w at level: text ("" or "text") or
// JSON ("json") records, with URL passwords redacted from every attribute
// (urls.RedactLogAttr), logs included. Another format is a
// *SettingsError.
func NewLogger(w io.Writer, format string, level slog.Level) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: urls.RedactLogAttr}
	switch format {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, settingsErrorf("--log-format must be text or json, not %q", format)
}
