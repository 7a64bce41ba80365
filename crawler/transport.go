package crawler

import (
	"compress/flate"
	"compress/gzip"
	"errors"
	"html/template"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/linkrot/linkrot/crawler/markdown"
)

// headerOrigContentType carries the server's Content-Type past Colly. Colly
// rewrites bodies whose Content-Type names a charset other than UTF-8 before
// any callback sees them; linkrot decodes bodies itself (BOM, header, <meta>,
// UTF-8 sniff), so the transport hands Colly the bare media type and keeps
// the original here.
const headerOrigContentType = "X-Linkrot-Content-Type"

// headerTruncated marks a body that hit the size cap.
const headerTruncated = "X-Linkrot-Truncated"

// capTransport bounds what a response can cost. It decompresses gzip and
// deflate bodies the Go transport did not already decode and caps the
// *decoded* byte count (Colly's MaxBodySize is applied before its own gzip
// step, so a small .gz body could inflate without limit: colly#923). It also
// marks every response as uncompressed so Colly never decompresses again.
type capTransport struct {
	next    http.RoundTripper
	maxBody int64
}

func (t *capTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body := resp.Body
	if !resp.Uncompressed {
		switch strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))) {
		case "gzip", "x-gzip":
			body = &lazyDecoder{src: resp.Body, open: func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) }}
			resp.Header.Del("Content-Encoding")
			resp.ContentLength = -1
		case "deflate":
			body = &lazyDecoder{src: resp.Body, open: func(r io.Reader) (io.Reader, error) { return flate.NewReader(r), nil }}
			resp.Header.Del("Content-Encoding")
			resp.ContentLength = -1
		}
	}
	resp.Uncompressed = true
	resp.Body = &cappedBody{r: body, left: t.maxBody, resp: resp}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		resp.Header.Set(headerOrigContentType, ct)
		if mt, _, err := mime.ParseMediaType(ct); err == nil {
			resp.Header.Set("Content-Type", mt)
		} else {
			resp.Header.Del("Content-Type")
		}
	}
	return resp, nil
}

// lazyDecoder opens a decompressor on first read, so a corrupt stream shows
// up as a read error of the page, not a transport failure.
type lazyDecoder struct {
	src  io.ReadCloser
	open func(io.Reader) (io.Reader, error)
	r    io.Reader
	err  error
}

func (d *lazyDecoder) Read(p []byte) (int, error) {
	if d.r == nil && d.err == nil {
		d.r, d.err = d.open(d.src)
	}
	if d.err != nil {
		return 0, d.err
	}
	return d.r.Read(p)
}

func (d *lazyDecoder) Close() error { return d.src.Close() }

// cappedBody ends the body after left bytes and records the truncation in the
// response header, which Colly hands to the callbacks.
type cappedBody struct {
	r    io.ReadCloser
	left int64
	resp *http.Response
}

func (c *cappedBody) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// Probe one byte to tell "exactly at the cap" from "beyond it".
		var one [1]byte
		if n, _ := c.r.Read(one[:]); n > 0 {
			c.resp.Header.Set(headerTruncated, "1")
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

func (c *cappedBody) Close() error { return c.r.Close() }

// dirTransport serves a local directory as if it were the site at base:
// requests for base's scheme and host are answered from the directory's
// Tree (see WalkTree), every other request goes to next. Only the tree's
// visible files are served (hidden and ignored ones answer 404, as if
// absent); Markdown is served as text/markdown. A folder answers with
// its index file (Tree.Index: index.html, else index.htm); one without
// answers as its folders rule says (see folderRule). The directory is
// opened as an os.Root so no request can escape it, symlinks included.
// Each file response names the file in headerFile: its path in the
// directory joined to filePrefix.
type dirTransport struct {
	base    *url.URL
	handler http.Handler
	next    http.RoundTripper
}

// headerFile carries the relative path of the file a local page came from.
const headerFile = "X-Linkrot-File"

// folderRule is how a folder without an index file answers.
type folderRule int

const (
	// folderNotFound: 404, as a static web server without directory
	// listings (nginx's autoindex off, Apache's Options -Indexes) answers.
	// The rule of an HTML build directory.
	folderNotFound folderRule = iota
	// folderEmpty: 200 with an empty text/plain body. The rule of a
	// Markdown repository: a forge shows every folder (a folder link is
	// valid), and nothing in the answer is a page to parse.
	folderEmpty
	// folderListing: 200 with a generated HTML listing of the folder's
	// entries (folderListingPage), whose links are crawled like those of
	// a server's autoindex page (--dir-listing).
	folderListing
)

func newDirTransport(dir, filePrefix string, base *url.URL, tree *Tree, folders folderRule, next http.RoundTripper) (*dirTransport, *os.Root, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	prefix := strings.TrimSuffix(base.Path, "/")
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if !strings.HasPrefix(p, prefix+"/") {
			http.NotFound(w, r)
			return
		}
		rel := strings.Trim(path.Clean(strings.TrimPrefix(p, prefix)), "/")
		if rel == "." {
			rel = ""
		}
		if !tree.Has(rel) {
			if !tree.HasDir(rel) {
				http.NotFound(w, r)
				return
			}
			idx := tree.Index(rel)
			if idx == "" {
				serveFolder(w, r, folders, prefix, rel, tree.Entries(rel))
				return
			}
			rel = idx
		}
		f, err := root.Open(filepath.FromSlash(rel))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil || st.IsDir() {
			http.NotFound(w, r)
			return
		}
		ct := mime.TypeByExtension(path.Ext(rel))
		if markdown.IsPath(rel) {
			ct = markdown.ContentType
		}
		if ct != "" {
			w.Header().Set("Content-Type", ct)
		}
		w.Header().Set(headerFile, path.Join(filePrefix, rel))
		http.ServeContent(w, r, "", st.ModTime(), f)
	})
	return &dirTransport{base: base, handler: h, next: next}, root, nil
}

// serveFolder answers a request for the folder rel (served under the URL
// path prefix), which has no index file, by rule.
func serveFolder(w http.ResponseWriter, r *http.Request, rule folderRule, prefix, rel string, entries []string) {
	switch rule {
	case folderEmpty:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	case folderListing:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := folderListingPage(w, prefix, rel, entries); err != nil {
			// The recorder the handler writes to does not fail; a
			// template error would be a bug of the template.
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	default:
		http.Error(w, "404 Not Found: the folder has no index.html or index.htm (a web server without directory listings answers 404; see --dir-listing)", http.StatusNotFound)
	}
}

// listingTemplate is the listing of a folder: one link per entry, by
// absolute path, so that it resolves the same whether the folder was
// asked for with its trailing slash or without. Entry names come from the
// file system and are hostile: html/template escapes them, and each href
// is a path (never a scheme: it starts with '/').
var listingTemplate = template.Must(template.New("listing").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Index of {{.Path}}</title></head>
<body><h1>Index of {{.Path}}</h1>
<ul>
{{- range .Entries}}
<li><a href="{{.Href}}">{{.Name}}</a></li>
{{- end}}
</ul></body></html>
`))

// folderListingPage writes the HTML listing of the folder rel (served
// under the URL path prefix) with the entries of Tree.Entries.
func folderListingPage(w io.Writer, prefix, rel string, entries []string) error {
	type entry struct{ Href, Name string }
	dirPath := prefix + "/"
	if rel != "" {
		dirPath += rel + "/"
	}
	data := struct {
		Path    string
		Entries []entry
	}{Path: dirPath}
	for _, name := range entries {
		u := url.URL{Path: dirPath + name}
		data.Entries = append(data.Entries, entry{Href: u.EscapedPath(), Name: name})
	}
	return listingTemplate.Execute(w, data)
}

func (t *dirTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.EqualFold(req.URL.Scheme, t.base.Scheme) || !strings.EqualFold(req.URL.Host, t.base.Host) {
		if t.next == nil {
			return nil, errors.New("offline: only the local directory is served")
		}
		return t.next.RoundTrip(req)
	}
	if req.Body != nil {
		req.Body.Close()
	}
	rec := httptest.NewRecorder()
	t.handler.ServeHTTP(rec, req)
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}
