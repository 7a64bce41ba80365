package warc

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/linkrot/linkrot/archives/memento"
)

// hostSuffix ends the reserved host names collections are served on
// (.invalid is reserved by RFC 2606: it can never reach the network).
const hostSuffix = ".warc.linkrot.invalid"

// hostOf returns the host name collection name is served on.
func hostOf(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-") + hostSuffix
}

// Archive returns the archive configuration that asks c: Memento
// TimeGate and TimeMap on c's reserved host, raw replay by the id_ flag,
// marked Local (asked about private URLs too, no budget).
func (c *Collection) Archive() memento.Archive {
	base := "http://" + hostOf(c.Name)
	return memento.Archive{
		Name:     c.Name,
		TimeGate: base + "/timegate/",
		TimeMap:  base + "/timemap/link/",
		Local:    true,
		Source:   fmt.Sprintf("local collection: %d captures", c.Len()),
	}
}

// ServeHTTP answers Memento requests about the collection:
//
//	/timegate/<URI-R>              302 to the capture nearest Accept-Datetime (the latest without it)
//	/timemap/link/<URI-R>          application/link-format TimeMap
//	/web/<timestamp>[id_]/<URI-R>  the capture (302 to the exact timestamp of the nearest one)
//
// Replays carry Memento-Datetime and Link rel="original"; their body is
// the archived payload as captured (no banner, no rewriting: every
// replay is raw).
func (c *Collection) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		p += "?" + r.URL.RawQuery
	}
	base := "http://" + r.Host
	switch {
	case strings.HasPrefix(p, "/timegate/"):
		uri := strings.TrimPrefix(p, "/timegate/")
		at := time.Now()
		if ad := r.Header.Get("Accept-Datetime"); ad != "" {
			t, err := memento.ParseDatetime(ad)
			if err != nil {
				http.Error(w, "malformed Accept-Datetime", http.StatusBadRequest)
				return
			}
			at = t
		}
		e, ok := c.Nearest(uri, at)
		if !ok {
			w.Header().Set("Vary", "accept-datetime")
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Vary", "accept-datetime")
		w.Header().Set("Location", replayURL(base, e, ""))
		w.Header().Set("Link", c.links(base, uri, []Entry{e}))
		w.WriteHeader(http.StatusFound)
	case strings.HasPrefix(p, "/timemap/link/"):
		uri := strings.TrimPrefix(p, "/timemap/link/")
		es := c.Captures(uri)
		if len(es) == 0 {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/link-format")
		io.WriteString(w, strings.ReplaceAll(c.links(base, uri, es), ", <", ",\n<")+"\n")
	case strings.HasPrefix(p, "/web/"):
		rest := strings.TrimPrefix(p, "/web/")
		ts, uri, ok := strings.Cut(rest, "/")
		if !ok {
			http.NotFound(w, r)
			return
		}
		flags := ""
		digits := strings.TrimRight(ts, "abcdefghijklmnopqrstuvwxyz_")
		flags = ts[len(digits):]
		at, err := parseTimestamp(digits)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		e, found := c.Nearest(uri, at)
		if !found {
			http.NotFound(w, r)
			return
		}
		if e.Time.Format("20060102150405") != digits {
			w.Header().Set("Location", replayURL(base, e, flags))
			w.WriteHeader(http.StatusFound)
			return
		}
		cp, err := c.Read(e)
		if err != nil {
			http.Error(w, "capture cannot be read: "+err.Error(), http.StatusBadGateway)
			return
		}
		h := w.Header()
		if ct := cp.Header.Get("Content-Type"); ct != "" {
			h.Set("Content-Type", ct)
		}
		if loc := cp.Header.Get("Location"); loc != "" {
			h.Set("Location", loc)
		}
		h.Set("Memento-Datetime", memento.FormatDatetime(e.Time))
		h.Set("Link", fmt.Sprintf("<%s>; rel=\"original\", <%s/timegate/%s>; rel=\"timegate\", <%s/timemap/link/%s>; rel=\"timemap\"; type=\"application/link-format\"",
			linkSafe(e.URL), base, linkSafe(uri), base, linkSafe(uri)))
		if cp.Revisit != nil {
			h.Set("X-Linkrot-Revisit-Of", replayURL(base, *cp.Revisit, ""))
		}
		h.Set("Content-Length", strconv.Itoa(len(cp.Body)))
		status := cp.Status
		if status < 100 || status > 999 {
			status = http.StatusOK
		}
		w.WriteHeader(status)
		w.Write(cp.Body)
	default:
		http.NotFound(w, r)
	}
}

func replayURL(base string, e Entry, flags string) string {
	return base + "/web/" + e.Time.UTC().Format("20060102150405") + flags + "/" + e.URL
}

// linkSafe keeps a URL from breaking out of a Link header's <...>.
func linkSafe(u string) string {
	return strings.NewReplacer(">", "%3E", "<", "%3C", "\r", "", "\n", "").Replace(u)
}

func (c *Collection) links(base, uri string, es []Entry) string {
	var parts []string
	parts = append(parts, fmt.Sprintf("<%s>; rel=\"original\"", linkSafe(es[0].URL)))
	parts = append(parts, fmt.Sprintf("<%s/timegate/%s>; rel=\"timegate\"", base, linkSafe(uri)))
	for i, e := range es {
		rel := "memento"
		if len(es) > 1 {
			switch i {
			case 0:
				rel = "first memento"
			case len(es) - 1:
				rel = "last memento"
			}
		}
		parts = append(parts, fmt.Sprintf("<%s>; rel=\"%s\"; datetime=\"%s\"", linkSafe(replayURL(base, e, "")), rel, memento.FormatDatetime(e.Time)))
	}
	return strings.Join(parts, ", ")
}

// Transport serves requests to the collections' reserved hosts in
// process and hands every other request to next.
func Transport(next http.RoundTripper, cols ...*Collection) http.RoundTripper {
	hosts := map[string]*Collection{}
	for _, c := range cols {
		hosts[hostOf(c.Name)] = c
	}
	return &transport{next: next, hosts: hosts}
}

type transport struct {
	next  http.RoundTripper
	hosts map[string]*Collection
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	c, ok := t.hosts[strings.ToLower(req.URL.Hostname())]
	if !ok {
		if strings.HasSuffix(strings.ToLower(req.URL.Hostname()), hostSuffix) {
			return nil, fmt.Errorf("no local collection at %s", req.URL.Host)
		}
		return t.next.RoundTrip(req)
	}
	if req.Body != nil {
		req.Body.Close()
	}
	rec := &recorder{header: http.Header{}}
	c.ServeHTTP(rec, req)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", rec.status, http.StatusText(rec.status)),
		StatusCode:    rec.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        rec.header,
		Body:          io.NopCloser(bytes.NewReader(rec.body.Bytes())),
		ContentLength: int64(rec.body.Len()),
		Request:       req,
	}, nil
}

// CloseIdleConnections passes through to next.
func (t *transport) CloseIdleConnections() {
	if ci, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(s int) {
	if r.status == 0 {
		r.status = s
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}
