package dashboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/report"
	"github.com/linkrot/linkrot/urls"
)

//go:embed templates/*.tmpl templates/dashboard.css templates/dashboard.js
var templateFS embed.FS

var (
	// The report's stylesheet, then the dashboard's few additions; each
	// is one inline <style>, allowed by its hash.
	reportCSS    = report.StyleSheet()
	dashboardCSS = mustRead("templates/dashboard.css")
	dashboardJS  = mustRead("templates/dashboard.js")

	csp = "default-src 'none'; style-src " + hashOf(reportCSS) + " " + hashOf(dashboardCSS) +
		"; script-src " + hashOf(dashboardJS) + "; connect-src 'self'; form-action 'self'" +
		"; base-uri 'none'; frame-ancestors 'none'"

	pages = template.Must(template.New("layout.tmpl").Funcs(template.FuncMap{
		"linkable": linkable,
		"vclass":   vclass,
		"bclass":   bclass,
		"fmtTime":  fmtTime,
		"fmtInt":   fmtInt,
		"ms":       func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + " ms" },
		"pct":      func(f float64) string { return strconv.FormatFloat(f*100, 'f', 0, 64) + "%" },
		"act": func(v layoutView, id int64) actionView {
			return actionView{Prefix: v.Prefix, CSRF: v.CSRF, ID: id}
		},
	}).ParseFS(templateFS, "templates/*.tmpl"))
)

func mustRead(name string) string {
	b, err := templateFS.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// layoutView is what layout.tmpl renders around a page.
type layoutView struct {
	*view
	CSP          string
	ReportCSS    template.CSS
	DashboardCSS template.CSS
	JS           template.JS
}

// actionView is what an action form needs.
type actionView struct {
	Prefix, CSRF string
	ID           int64
}

func (h *handler) render(w http.ResponseWriter, r *http.Request, status int, v *view) {
	v.Prefix = h.opts.Prefix
	v.Actions = h.opts.ActionsEnabled && h.opts.CSRFToken != ""
	v.CSRF = h.opts.CSRFToken
	v.Generator = h.opts.Generator
	v.Query = r.URL.Query().Get("q")
	lv := layoutView{view: v, CSP: csp, ReportCSS: template.CSS(reportCSS),
		DashboardCSS: template.CSS(dashboardCSS), JS: template.JS(dashboardJS)}
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, "layout.tmpl", lv); err != nil {
		h.log.Error("dashboard render", "path", r.URL.Path, "err", err)
		http.Error(w, "render error", http.StatusInternalServerError)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Content-Security-Policy", csp)
	hdr.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// linkable reports whether a URL may become a link: http and https only
// (html/template would also pass mailto:, and neutralise javascript:, but
// a crawled URL of any other scheme is shown as text).
func linkable(s string) bool {
	u, err := urls.ParseURL(s) // the one URL parser ("/a%zz" is a link)
	if err != nil || u.Hostname() == "" {
		return false
	}
	switch u.Scheme() {
	case "http", "https":
		return true
	}
	return false
}

func vclass(v audit.Verdict) string {
	if v == unchecked {
		return "muted"
	}
	return report.VerdictClass(v)
}

func bclass(b string) string { return report.BandClass(b) }

func fmtInt(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
