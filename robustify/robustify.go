package robustify

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/linkrot/linkrot/urls"
)

// Memento is a capture a link can name as its version.
type Memento struct {
	URL      string
	Datetime time.Time
}

// Lookup finds the memento of uriR nearest to at. It returns ErrNoMemento
// (wrapped) when no archive has one; other errors are failed lookups.
type Lookup func(ctx context.Context, uriR string, at time.Time) (Memento, error)

// Capture asks an archive for a new capture of uriR (--save), within the
// archive's save budget.
type Capture func(ctx context.Context, uriR string) (Memento, error)

// Verify audits a declared snapshot: nil when it is a memento that
// answers, else why not.
type Verify func(ctx context.Context, versionURL string) error

// ErrNoMemento is returned (wrapped) by a Lookup that found no memento.
var ErrNoMemento = errors.New("no memento in any archive")

// Options configure Run.
type Options struct {
	// Lookup is required.
	Lookup Lookup
	// Save, when set, captures targets without a memento (--save).
	Save Capture
	// Verify audits links that already carry attributes (nil: they are
	// left alone and counted).
	Verify Verify
	// Fix replaces data-versionurl of links whose declared snapshot
	// Verify finds broken with the memento nearest to the link's own
	// data-versiondate, which is kept: it is the linking date, and a
	// broken snapshot does not change it. A link without a usable
	// data-versiondate gets the file's date (Date) written as well.
	Fix bool
	// DryRun writes nothing: Result has each file's unified diff.
	DryRun bool
	// SiteHosts are hosts whose links are not outbound (host[:port],
	// lower case): the site's own.
	SiteHosts map[string]bool
	// Date is the linking date of a file's links (robust-links 3.3,
	// 3.5): written as their data-versiondate, and the date the memento
	// nearest to which becomes their data-versionurl. doc is the file's
	// content. Default FileDate: the file's modification time, to the
	// second.
	Date func(rel string, info fs.FileInfo, doc []byte) LinkDate
	// Now is the time of the run (default time.Now): the linking date of
	// a link protected by a new capture (Save), made now.
	Now func() time.Time
	// Workers is the number of concurrent lookups (default 8); the
	// archives' budgets bound the request rate.
	Workers int
}

// Actions on a link.
const (
	ActionAdded    = "added"     // attributes added from a memento
	ActionSaved    = "saved"     // attributes added from a new capture (--save)
	ActionAudited  = "audited"   // already carried attributes; snapshot answers
	ActionBroken   = "broken"    // already carried attributes; snapshot broken
	ActionFixed    = "fixed"     // broken snapshot replaced (--fix)
	ActionSkipped  = "skipped"   // could not be protected; Reason says why
	ActionKeptAsIs = "unchecked" // already carried attributes; not audited (no Verify)
)

// LinkResult is what became of one outbound link.
type LinkResult struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Href   string `json:"href"`
	Action string `json:"action"`
	Reason string `json:"reason,omitempty"`
	// VersionURL and VersionDate are the attributes added or fixed
	// (with Fix, VersionDate is the declared date that was kept, or the
	// one written), DateSource where VersionDate comes from (see
	// LinkDate.Source).
	VersionURL  string `json:"versionurl,omitempty"`
	VersionDate string `json:"versiondate,omitempty"`
	DateSource  string `json:"versiondate_source,omitempty"`
	// MementoDatetime is the capture time of the memento named as
	// VersionURL (RFC 3339, UTC): recorded here, never as the
	// versiondate, which is the linking date.
	MementoDatetime string `json:"memento_datetime,omitempty"`
}

// FileResult is one HTML file of the directory.
type FileResult struct {
	Path    string // relative to the directory, slash-separated
	Changed bool
	Diff    string // unified diff of the change (DryRun and real runs)
	Skipped string // why the file was not read or written
}

// Result is a Run's outcome.
type Result struct {
	Files []FileResult
	Links []LinkResult
}

// Count returns how many links got action a.
func (r *Result) Count(a string) int {
	n := 0
	for _, l := range r.Links {
		if l.Action == a {
			n++
		}
	}
	return n
}

// isHTMLName reports whether a file is an HTML page by its name.
func isHTMLName(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".html", ".htm", ".xhtml":
		return true
	}
	return false
}

// Run robustifies every HTML file under dir. It returns an error only
// when dir cannot be opened or ctx is cancelled; a file or link that
// cannot be handled is a result with its reason.
func Run(ctx context.Context, dir string, o Options) (*Result, error) {
	if o.Lookup == nil {
		return nil, errors.New("robustify: no Lookup")
	}
	if o.Workers <= 0 {
		o.Workers = 8
	}
	if o.Date == nil {
		o.Date = FileDate
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("robustify: %w", err)
	}
	defer root.Close()
	res := &Result{}
	var files []string
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			res.Files = append(res.Files, FileResult{Path: p, Skipped: "cannot read: " + err.Error()})
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if isHTMLName(p) {
				res.Files = append(res.Files, FileResult{Path: p, Skipped: symlinkReason(dir, p)})
			}
			return nil // a symlinked directory is not entered either
		}
		if d.Type().IsRegular() && isHTMLName(p) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("robustify: walk %s: %w", dir, err)
	}
	sort.Strings(files)

	type fileWork struct {
		rel  string
		doc  []byte
		info fs.FileInfo
		tags []Tag
		date LinkDate // the file's linking date
	}
	var work []fileWork
	for _, rel := range files {
		info, err := root.Lstat(rel)
		if err != nil || !info.Mode().IsRegular() {
			res.Files = append(res.Files, FileResult{Path: rel, Skipped: "not a regular file"})
			continue
		}
		doc, err := root.ReadFile(rel)
		if err != nil {
			res.Files = append(res.Files, FileResult{Path: rel, Skipped: "cannot read: " + err.Error()})
			continue
		}
		work = append(work, fileWork{rel: rel, doc: doc, info: info, tags: Tags(doc), date: o.Date(rel, info, doc)})
	}

	// Each distinct (resource, date) question is asked once.
	type question struct {
		uri string
		at  int64
	}
	type answer struct {
		m   Memento
		err error
	}
	answers := map[question]*answer{}
	verified := map[string]error{}
	var qs []question
	var vs []string
	for _, w := range work {
		for _, t := range w.tags {
			u, ok := o.outbound(t)
			if !ok {
				continue
			}
			if t.HasRobust() {
				if v := firstURL(t.Attrs[AttrVersion]); v != "" && o.Verify != nil {
					if _, seen := verified[v]; !seen {
						verified[v] = nil
						vs = append(vs, v)
					}
				}
				if !o.Fix {
					continue
				}
				u = originalOf(t, u)
			}
			q := question{u, linkDate(t, w.date).Time.Unix()}
			if _, ok := answers[q]; !ok {
				answers[q] = &answer{}
				qs = append(qs, q)
			}
		}
	}
	var mu sync.Mutex
	parallel(ctx, o.Workers, len(vs), func(i int) {
		err := o.Verify(ctx, vs[i])
		mu.Lock()
		verified[vs[i]] = err
		mu.Unlock()
	})
	parallel(ctx, o.Workers, len(qs), func(i int) {
		q := qs[i]
		m, err := o.Lookup(ctx, q.uri, time.Unix(q.at, 0).UTC())
		if errors.Is(err, ErrNoMemento) && o.Save != nil {
			if sm, serr := o.Save(ctx, q.uri); serr == nil {
				m, err = sm, errSaved
			} else {
				err = fmt.Errorf("%w; save: %v", err, serr)
			}
		}
		mu.Lock()
		answers[q] = &answer{m, err}
		mu.Unlock()
	})
	if err := ctx.Err(); err != nil {
		return res, err
	}

	now := DateTime(o.Now(), "now")
	for _, w := range work {
		var edits []Edit
		for _, t := range w.tags {
			u, ok := o.outbound(t)
			if !ok {
				continue
			}
			lr := LinkResult{File: w.rel, Line: t.Line, Href: t.Attrs["href"]}
			if t.HasRobust() {
				edits = append(edits, o.audit(t, u, w.date, &lr, verified, func(uri string, at LinkDate) (Memento, error) {
					a := answers[question{uri, at.Time.Unix()}]
					if a == nil {
						return Memento{}, errors.New("not looked up")
					}
					return a.m, a.err
				})...)
				res.Links = append(res.Links, lr)
				continue
			}
			a := answers[question{u, w.date.Time.Unix()}]
			switch {
			case !t.Insertable():
				lr.Action, lr.Reason = ActionSkipped, `the tag ends in a dangling "=": an attribute added there would become another's value`
			case a == nil:
				lr.Action, lr.Reason = ActionSkipped, "not looked up"
			case a.err != nil && !errors.Is(a.err, errSaved):
				lr.Action, lr.Reason = ActionSkipped, "cannot protect: "+a.err.Error()
			default:
				lr.Action = ActionAdded
				d := w.date
				if errors.Is(a.err, errSaved) {
					// A new capture: the link is made now.
					lr.Action, d = ActionSaved, now
				}
				lr.VersionURL, lr.VersionDate, lr.DateSource = URIForm(a.m.URL), d.String(), d.Source
				lr.MementoDatetime = mementoDatetime(a.m.Datetime)
				edits = append(edits, InsertAttrs(t, [][2]string{{AttrOriginal, URIForm(u)}, {AttrDate, lr.VersionDate}, {AttrVersion, lr.VersionURL}}))
			}
			res.Links = append(res.Links, lr)
		}
		fr := FileResult{Path: w.rel}
		if len(edits) > 0 {
			out := Apply(w.doc, edits)
			fr.Changed = true
			fr.Diff = UnifiedDiff(w.rel, w.doc, out)
			if !o.DryRun {
				if err := writeAtomic(root, w.rel, out, w.info); err != nil {
					fr.Changed, fr.Skipped = false, "not written: "+err.Error()
				}
			}
		}
		res.Files = append(res.Files, fr)
	}
	sort.SliceStable(res.Files, func(i, j int) bool { return res.Files[i].Path < res.Files[j].Path })
	return res, nil
}

var errSaved = errors.New("saved")

// linkDate is the date t's memento is looked up for: its own
// data-versiondate when usable (a link that carries attributes), else
// the file's date.
func linkDate(t Tag, file LinkDate) LinkDate {
	if v, ok := t.Attrs[AttrDate]; ok {
		if d, ok := ParseLinkDate(v, "declared"); ok {
			return d
		}
	}
	return file
}

// audit handles a link that already carries attributes.
func (o Options) audit(t Tag, u string, file LinkDate, lr *LinkResult, verified map[string]error, near func(string, LinkDate) (Memento, error)) []Edit {
	v := firstURL(t.Attrs[AttrVersion])
	switch {
	case o.Verify == nil:
		lr.Action, lr.Reason = ActionKeptAsIs, "already carries Robust Links attributes"
		return nil
	case v == "":
		lr.Action, lr.Reason = ActionAudited, "already carries Robust Links attributes (no data-versionurl to check)"
		return nil
	case verified[v] == nil:
		lr.Action = ActionAudited
		return nil
	}
	lr.Action, lr.Reason = ActionBroken, "declared snapshot "+v+": "+verified[v].Error()
	if !o.Fix {
		return nil
	}
	d := linkDate(t, file)
	m, err := near(originalOf(t, u), d)
	if err != nil && !errors.Is(err, errSaved) {
		lr.Reason += "; not fixed: " + err.Error()
		return nil
	}
	var edits []Edit
	lr.VersionDate, lr.DateSource = d.String(), d.Source
	if d.Source != "declared" {
		// No usable data-versiondate: the file's date is written.
		e, ok := ReplaceAttr(t, AttrDate, d.String())
		if !ok && t.Insertable() {
			e, ok = InsertAttrs(t, [][2]string{{AttrDate, d.String()}}), true
		}
		if ok {
			edits = append(edits, e)
		} else {
			lr.VersionDate, lr.DateSource = "", ""
		}
	}
	if e, ok := ReplaceAttr(t, AttrVersion, URIForm(m.URL)); ok {
		edits = append(edits, e)
	}
	lr.Action, lr.VersionURL = ActionFixed, URIForm(m.URL)
	lr.MementoDatetime = mementoDatetime(m.Datetime)
	return edits
}

// outbound returns the absolute http(s) URL of t's href when it leaves
// the site.
func (o Options) outbound(t Tag) (string, bool) {
	href := strings.TrimSpace(t.Attrs["href"])
	if href == "" {
		return "", false
	}
	// The URL parser of the audit (WHATWG): a link robustify protects is
	// a link the audit checks.
	u, err := urls.ParseURL(href)
	if err != nil || (u.Scheme() != "http" && u.Scheme() != "https") || u.Hostname() == "" {
		return "", false
	}
	if o.SiteHosts[u.Host()] {
		return "", false
	}
	return href, true // as written (data-originalurl repeats the href)
}

// originalOf is a link's data-originalurl when absolute, else u.
func originalOf(t Tag, u string) string {
	if o := strings.TrimSpace(t.Attrs[AttrOriginal]); o != "" {
		if ou, err := urls.ParseURL(o); err == nil && (ou.Scheme() == "http" || ou.Scheme() == "https") && ou.Hostname() != "" {
			return o
		}
	}
	return u
}

func firstURL(v string) string {
	f := strings.Fields(v)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// URIForm percent-encodes the bytes a URI may not hold (non-ASCII,
// controls, space and "<>\"{}|\\^`), so that a link's href (an IRI, or
// a URL with characters browsers tolerate) becomes the absolute URI the
// Robust Links attributes require (robust-links §3.2). Everything else,
// "%" included, is kept.
func URIForm(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= 0x20 || c >= 0x7f || strings.IndexByte("<>\"{}|\\^`", c) >= 0 {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// mementoDatetime writes a memento's capture time for the result.
func mementoDatetime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func symlinkReason(dir, rel string) string {
	target, err := filepath.EvalSymlinks(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		return "symlink that does not resolve: not followed"
	}
	absDir, _ := filepath.EvalSymlinks(dir)
	if r, err := filepath.Rel(absDir, target); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "symlink leading out of the directory: not followed"
	}
	return "symlink: not followed (its target in the directory is edited itself)"
}

// writeAtomic replaces rel with data: a temporary file in the same
// directory, synced, then renamed over it, all through root. The file
// keeps its permissions and its modification time: adding attributes is
// no edit of the page's content, and the modification time stays the
// linking date of links a later run protects.
func writeAtomic(root *os.Root, rel string, data []byte, info fs.FileInfo) error {
	perm := info.Mode().Perm()
	dir, base := path.Split(rel)
	var tmp string
	var f *os.File
	var err error
	for i := 0; i < 100; i++ {
		tmp = fmt.Sprintf("%s.%s.robustify-%d-%d.tmp", dir, base, os.Getpid(), i)
		f, err = root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = root.Chmod(tmp, perm)
	}
	if werr == nil {
		werr = root.Chtimes(tmp, time.Now(), info.ModTime())
	}
	if werr == nil {
		werr = root.Rename(tmp, rel)
	}
	if werr != nil {
		root.Remove(tmp)
	}
	return werr
}

// parallel calls fn(i) for i in [0, n) on workers goroutines.
func parallel(ctx context.Context, workers, n int, fn func(int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for i := range next {
				fn(i)
			}
		})
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}
