package warc

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/linkrot/linkrot/urls"
	gowarc "github.com/nlnwa/gowarc/v3"
)

// Entry is one capture in a collection's index.
type Entry struct {
	// URL is the WARC-Target-URI; Time the WARC-Date.
	URL  string
	Time time.Time
	// Mime is the payload's media type ("warc/revisit" for a revisit
	// record), Status the archived HTTP status (200 for resource records).
	Mime   string
	Status int
	// Digest is the WARC-Payload-Digest (of the revisited payload for a
	// revisit record).
	Digest string
	// Offset and Length locate the record in File (a path for a WARC
	// file, a member name inside a WACZ).
	Offset, Length int64
	File           string
	// RefersToURL and RefersToDate are a revisit record's
	// WARC-Refers-To-Target-URI and WARC-Refers-To-Date.
	RefersToURL  string
	RefersToDate time.Time
}

// Revisit reports whether e is a revisit record.
func (e Entry) Revisit() bool { return e.Mime == "warc/revisit" }

// Diagnostic is a record (or file) that could not be read.
type Diagnostic struct {
	File   string
	Offset int64
	Err    string
}

func (d Diagnostic) String() string {
	return fmt.Sprintf("%s at offset %d: %s", d.File, d.Offset, d.Err)
}

// Collection is a set of WARC files (directly, in directories, in WACZ
// packages) with their index. It is safe for concurrent use.
type Collection struct {
	// Name names the collection (the archive name of its lookups).
	Name string

	mu          sync.Mutex
	byKey       map[string][]Entry // sorted by Time
	byDigest    map[string][]Entry // non-revisit records by payload digest
	sources     map[string]*source // by Entry.File
	diagnostics []Diagnostic
	indexes     []string // index files used or built
}

// source is a WARC file, or a member of a WACZ.
type source struct {
	path   string // the file on disk
	member string // the WARC inside a WACZ ("" for a plain WARC file)
}

// Options configure Open.
type Options struct {
	// IndexDir is where built indexes are kept (next to the database);
	// "" keeps them in memory only.
	IndexDir string
}

// Open reads (or builds) the index of every WARC under paths: WARC files,
// directories of them (recursively: .warc, .warc.gz, .wacz) and WACZ
// packages. A path that does not exist or holds no WARC is an error;
// records that do not parse are Diagnostics.
func Open(name string, paths []string, opts Options) (*Collection, error) {
	c := &Collection{Name: name, byKey: map[string][]Entry{}, byDigest: map[string][]Entry{}, sources: map[string]*source{}}
	files := 0
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("archive-warc %s: %w", p, err)
		}
		st, err := os.Stat(abs)
		if err != nil {
			return nil, fmt.Errorf("archive-warc: %w", err)
		}
		var list []string
		if st.IsDir() {
			err := filepath.WalkDir(abs, func(path string, d os.DirEntry, err error) error {
				if err != nil {
					c.diag(path, 0, err)
					return nil
				}
				if d.Type().IsRegular() && isWARCName(path) {
					list = append(list, path)
				}
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("archive-warc %s: %w", p, err)
			}
		} else {
			list = []string{abs}
		}
		for _, f := range list {
			if err := c.addFile(f, opts); err != nil {
				return nil, err
			}
			files++
		}
	}
	if files == 0 {
		return nil, fmt.Errorf("archive-warc %s: no .warc, .warc.gz or .wacz file", strings.Join(paths, ", "))
	}
	for k := range c.byKey {
		es := c.byKey[k]
		sort.SliceStable(es, func(i, j int) bool { return es[i].Time.Before(es[j].Time) })
	}
	return c, nil
}

func isWARCName(p string) bool {
	l := strings.ToLower(p)
	return strings.HasSuffix(l, ".warc") || strings.HasSuffix(l, ".warc.gz") || strings.HasSuffix(l, ".wacz")
}

func (c *Collection) diag(file string, off int64, err error) {
	c.mu.Lock()
	c.diagnostics = append(c.diagnostics, Diagnostic{File: file, Offset: off, Err: truncate(err.Error(), 300)})
	c.mu.Unlock()
}

// Diagnostics returns the records and files that could not be read.
func (c *Collection) Diagnostics() []Diagnostic {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Diagnostic(nil), c.diagnostics...)
}

// Indexes returns the index files the collection used or built.
func (c *Collection) Indexes() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.indexes...)
}

// Len returns the number of captures indexed.
func (c *Collection) Len() int {
	n := 0
	for _, es := range c.byKey {
		n += len(es)
	}
	return n
}

func (c *Collection) add(e Entry, src *source) {
	c.sources[e.File] = src
	k := keyOf(e.URL)
	c.byKey[k] = append(c.byKey[k], e)
	if !e.Revisit() && e.Digest != "" {
		c.byDigest[e.Digest] = append(c.byDigest[e.Digest], e)
	}
}

// addFile indexes one WARC file or WACZ package.
func (c *Collection) addFile(path string, opts Options) error {
	if strings.HasSuffix(strings.ToLower(path), ".wacz") {
		return c.addWACZ(path, opts)
	}
	src := &source{path: path}
	entries, err := c.index(path, opts, func() ([]Entry, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return c.scan(f, path, path), nil
	})
	if err != nil {
		return err
	}
	for _, e := range entries {
		e.File = path
		c.add(e, src)
	}
	return nil
}

// addWACZ indexes a WACZ package: its indexes/index.cdxj when present,
// else its archive/ WARCs scanned.
func (c *Collection) addWACZ(path string, opts Options) error {
	zr, err := zip.OpenReader(path)
	if err != nil {
		c.diag(path, 0, fmt.Errorf("not a WACZ (zip): %w", err))
		return nil
	}
	defer zr.Close()
	var own *zip.File
	var warcs []*zip.File
	for _, f := range zr.File {
		switch {
		case f.Name == "indexes/index.cdxj":
			own = f
		case strings.HasPrefix(f.Name, "archive/") && isWARCName(f.Name):
			warcs = append(warcs, f)
		}
	}
	member := func(name string) string { return path + "#" + name }
	if own != nil {
		rc, err := own.Open()
		if err == nil {
			entries, bad := readCDXJ(io.LimitReader(rc, 1<<30))
			rc.Close()
			for _, b := range bad {
				c.diag(member(own.Name), 0, b)
			}
			for _, e := range entries {
				name := "archive/" + filepath.Base(e.File)
				e.File = member(name)
				c.add(e, &source{path: path, member: name})
			}
			c.mu.Lock()
			c.indexes = append(c.indexes, member(own.Name))
			c.mu.Unlock()
			return nil
		}
		c.diag(member(own.Name), 0, err)
	}
	entries, err := c.index(path, opts, func() ([]Entry, error) {
		var all []Entry
		for _, f := range warcs {
			rc, err := f.Open()
			if err != nil {
				c.diag(member(f.Name), 0, err)
				continue
			}
			es := c.scan(rc, member(f.Name), f.Name)
			rc.Close()
			all = append(all, es...)
		}
		return all, nil
	})
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.File
		e.File = member(name)
		c.add(e, &source{path: path, member: name})
	}
	return nil
}

// scan reads every record of one WARC stream; file names the stream in
// diagnostics, name goes into the entries' File. It never fails: what
// does not parse is a diagnostic, and a panic of the WARC library on
// hostile input is one too.
func (c *Collection) scan(r io.Reader, file, name string) (out []Entry) {
	defer func() {
		if p := recover(); p != nil {
			c.diag(file, -1, fmt.Errorf("WARC reader failed: %v", p))
		}
	}()
	wr, err := gowarc.NewWarcFileReaderFromStream(r, 0,
		gowarc.WithSyntaxErrorPolicy(gowarc.ErrWarn),
		// Spec violations are ignored, not warned about: gowarc blanks a
		// field that fails validation under ErrWarn, and GNU wget 1.21
		// writes WARC-Target-URI in angle brackets (the WARC 1.0 draft's
		// form), which must be read, not dropped.
		gowarc.WithSpecViolationPolicy(gowarc.ErrIgnore),
		gowarc.WithUnknownRecordTypePolicy(gowarc.ErrIgnore),
		gowarc.WithBufferMaxMemBytes(4<<20))
	if err != nil {
		c.diag(file, 0, err)
		return nil
	}
	defer wr.Close()
	lastEnd, errs := int64(-1), 0
	for n := 0; n < 10_000_000; n++ {
		rec, err := wr.Next()
		if errors.Is(err, io.EOF) && rec.WarcRecord == nil {
			return out
		}
		if err != nil {
			// No progress, or errors without end: the stream is unreadable
			// from here on.
			if end := rec.Offset + rec.Size; end <= lastEnd || errs >= 100 {
				c.diag(file, rec.Offset, err)
				return out
			}
			errs++
		} else {
			errs = 0
		}
		lastEnd = max(lastEnd, rec.Offset+rec.Size)
		if errors.Is(err, io.EOF) && rec.WarcRecord == nil {
			return out
		}
		if err != nil {
			c.diag(file, rec.Offset, err)
			if rec.WarcRecord != nil {
				rec.WarcRecord.Close()
			}
			// A record that does not parse leaves the reader somewhere in
			// the stream; a truncated gzip member ends it.
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || strings.Contains(err.Error(), "gzip") {
				return out
			}
			continue
		}
		if rec.WarcRecord == nil {
			return out
		}
		if e, ok := entryOf(rec); ok {
			e.File = name
			out = append(out, e)
		}
		rec.WarcRecord.Close()
	}
	return out
}

// entryOf indexes a response, resource or revisit record.
func entryOf(rec gowarc.Record) (Entry, bool) {
	wr := rec.WarcRecord
	t := wr.Type()
	if t != gowarc.Response && t != gowarc.Resource && t != gowarc.Revisit {
		return Entry{}, false
	}
	h := wr.WarcHeader()
	uri := strings.Trim(h.Get(gowarc.WarcTargetURI), "<>")
	if uri == "" {
		return Entry{}, false
	}
	date, err := wr.Date()
	if err != nil {
		return Entry{}, false
	}
	e := Entry{URL: uri, Time: date.UTC().Truncate(time.Second), Offset: rec.Offset, Length: rec.Size,
		Digest: h.Get(gowarc.WarcPayloadDigest), Status: 200}
	switch t {
	case gowarc.Revisit:
		e.Mime = "warc/revisit"
		e.RefersToURL = strings.Trim(h.Get(gowarc.WarcRefersToTargetURI), "<>")
		if d := h.Get(gowarc.WarcRefersToDate); d != "" {
			if rt, err := time.Parse(time.RFC3339, d); err == nil {
				e.RefersToDate = rt.UTC()
			}
		}
		if b, ok := wr.Block().(gowarc.HttpResponseBlock); ok {
			e.Status = b.HttpStatusCode()
		}
	case gowarc.Resource:
		e.Mime = mediaType(h.Get(gowarc.ContentType))
	default:
		b, ok := wr.Block().(gowarc.HttpResponseBlock)
		if !ok {
			return Entry{}, false
		}
		e.Status = b.HttpStatusCode()
		if hh := b.HttpHeader(); hh != nil {
			e.Mime = mediaType(hh.Get("Content-Type"))
		}
	}
	return e, true
}

func mediaType(ct string) string {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// keyOf is the lookup key of a URL: urls.NormalizeURL without the scheme
// (http and https match interchangeably, as in the Wayback Machine).
func keyOf(raw string) string {
	n, err := urls.NormalizeURL(raw)
	if err != nil {
		n = raw
	}
	if i := strings.Index(n, "://"); i >= 0 {
		n = n[i+3:]
	}
	return n
}

// Captures returns the captures of uriR, oldest first.
func (c *Collection) Captures(uriR string) []Entry {
	return c.byKey[keyOf(uriR)]
}

// Nearest returns the capture of uriR nearest to at (the earlier on a
// tie).
func (c *Collection) Nearest(uriR string, at time.Time) (Entry, bool) {
	var best Entry
	found := false
	for _, e := range c.byKey[keyOf(uriR)] {
		d, bd := absDur(e.Time.Sub(at)), absDur(best.Time.Sub(at))
		if !found || d < bd {
			best, found = e, true
		}
	}
	return best, found
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// Capture is a capture read back: archived status, headers and payload.
type Capture struct {
	Entry  Entry
	Status int
	Header http.Header
	Body   []byte
	// Revisit is set when Body is the payload of the record Entry revisits.
	Revisit *Entry
}

// maxPayload caps the payload bytes read of one capture.
const maxPayload = 16 << 20

// Read reads the capture e: for a revisit record, the payload of the
// record it revisits (by WARC-Refers-To-Target-URI and -Date, else by
// payload digest), with the revisit's own status and headers when it has
// them.
func (c *Collection) Read(e Entry) (cap *Capture, err error) {
	defer func() {
		if p := recover(); p != nil {
			cap, err = nil, fmt.Errorf("WARC reader failed on %s at %d: %v", e.File, e.Offset, p)
		}
	}()
	status, header, body, err := c.readRecord(e)
	if err != nil {
		return nil, err
	}
	cp := &Capture{Entry: e, Status: status, Header: header, Body: body}
	if !e.Revisit() {
		return cp, nil
	}
	orig, ok := c.revisited(e)
	if !ok {
		return nil, fmt.Errorf("revisit record of %s at %s: the revisited record is not in the collection", e.URL, e.Time.Format(time.RFC3339))
	}
	ost, oh, ob, err := c.readRecord(orig)
	if err != nil {
		return nil, fmt.Errorf("revisited record: %w", err)
	}
	cp.Revisit, cp.Body = &orig, ob
	if cp.Status == 0 || cp.Status == http.StatusNotModified {
		cp.Status = ost
	}
	if len(cp.Header) == 0 {
		cp.Header = oh
	}
	return cp, nil
}

// revisited finds the record a revisit record refers to.
func (c *Collection) revisited(e Entry) (Entry, bool) {
	if e.RefersToURL != "" && !e.RefersToDate.IsZero() {
		for _, o := range c.byKey[keyOf(e.RefersToURL)] {
			if !o.Revisit() && o.Time.Equal(e.RefersToDate.Truncate(time.Second)) {
				return o, true
			}
		}
	}
	var best Entry
	found := false
	for _, o := range c.byDigest[e.Digest] {
		if o.Time.After(e.Time) {
			continue
		}
		if !found || keyOf(o.URL) == keyOf(e.URL) && keyOf(best.URL) != keyOf(e.URL) || o.Time.After(best.Time) {
			best, found = o, true
		}
	}
	return best, found
}

// readRecord reads the record at e's offset.
func (c *Collection) readRecord(e Entry) (int, http.Header, []byte, error) {
	src := c.sources[e.File]
	if src == nil {
		return 0, nil, nil, fmt.Errorf("no source %s", e.File)
	}
	r, closeFn, err := src.open(e.Offset)
	if err != nil {
		return 0, nil, nil, err
	}
	defer closeFn()
	wr, err := gowarc.NewWarcFileReaderFromStream(r, e.Offset,
		gowarc.WithSyntaxErrorPolicy(gowarc.ErrWarn),
		gowarc.WithSpecViolationPolicy(gowarc.ErrIgnore),
		gowarc.WithUnknownRecordTypePolicy(gowarc.ErrIgnore))
	if err != nil {
		return 0, nil, nil, err
	}
	defer wr.Close()
	rec, err := wr.Next()
	if rec.WarcRecord == nil {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, nil, fmt.Errorf("record at %d of %s: %w", e.Offset, e.File, err)
	}
	defer rec.WarcRecord.Close()
	switch b := rec.WarcRecord.Block().(type) {
	case gowarc.HttpResponseBlock:
		var h http.Header
		if hh := b.HttpHeader(); hh != nil {
			h = hh.Clone()
		}
		body, err := readPayload(b)
		return b.HttpStatusCode(), h, body, err
	case gowarc.PayloadBlock:
		body, err := readPayload(b)
		h := http.Header{}
		if ct := rec.WarcRecord.WarcHeader().Get(gowarc.ContentType); ct != "" {
			h.Set("Content-Type", ct)
		}
		return http.StatusOK, h, body, err
	}
	return 0, nil, nil, fmt.Errorf("record at %d of %s has no payload", e.Offset, e.File)
}

func readPayload(b gowarc.PayloadBlock) ([]byte, error) {
	r, err := b.PayloadBytes()
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(r, maxPayload))
	if err != nil {
		return body, fmt.Errorf("payload: %w", err)
	}
	return body, nil
}

// open returns a reader of the source that is either seekable (the WARC
// reader seeks it to off) or positioned at off already.
func (s *source) open(off int64) (io.Reader, func(), error) {
	// The WARC reader seeks a seekable reader to the offset itself.
	if s.member == "" {
		f, err := os.Open(s.path)
		if err != nil {
			return nil, nil, err
		}
		return f, func() { f.Close() }, nil
	}
	zr, err := zip.OpenReader(s.path)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range zr.File {
		if f.Name != s.member {
			continue
		}
		if f.Method == zip.Store {
			// A stored member is a byte range of the package: seek.
			start, err := f.DataOffset()
			if err == nil {
				fh, err := os.Open(s.path)
				if err == nil {
					zr.Close()
					sr := io.NewSectionReader(fh, start, int64(f.CompressedSize64))
					return sr, func() { fh.Close() }, nil
				}
			}
		}
		rc, err := f.Open()
		if err != nil {
			zr.Close()
			return nil, nil, err
		}
		if _, err := io.CopyN(io.Discard, rc, off); err != nil {
			rc.Close()
			zr.Close()
			return nil, nil, err
		}
		return rc, func() { rc.Close(); zr.Close() }, nil
	}
	zr.Close()
	return nil, nil, fmt.Errorf("%s: no member %s", s.path, s.member)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
