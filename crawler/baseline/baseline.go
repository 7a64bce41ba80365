// Package baseline decides which link occurrences a change introduced, for
// linkrot --fail-on introduced. An occurrence is old when the same target
// occurred at the baseline on a line with the same text, in any file
// (audit.LineHash): moving a paragraph within a file or to another file
// keeps its links old, while a new link, or an old target written into a
// new or edited line, is introduced. The baseline is a git revision of the
// audited directory (FromGit) or the occurrences a previous run recorded
// (its database, read by the caller).
package baseline

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"os/exec"
	"path"
	"strconv"
	"strings"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/crawler"
	"github.com/linkrot/linkrot/crawler/extract"
	"github.com/linkrot/linkrot/crawler/markdown"
	"github.com/linkrot/linkrot/urls"
)

// Occurrence is a link occurrence as the rule compares it: the link's
// target as urls.NormalizeURL writes it, and the hash of its line.
type Occurrence struct {
	Target   string
	LineHash string
}

// Set is the occurrences of a baseline.
type Set map[Occurrence]bool

// Key returns the occurrence of a link (ok false when it has no position,
// and so cannot be compared: such a link counts as introduced). A link
// whose URL does not parse occurs as audit.InvalidURLOccurrence of its
// href.
func Key(l *audit.Link) (Occurrence, bool) {
	if l.LineHash == "" {
		return Occurrence{}, false
	}
	t, err := urls.NormalizeURL(l.Href)
	if err != nil {
		t = audit.InvalidURLOccurrence(l.Href)
	}
	return Occurrence{Target: t, LineHash: l.LineHash}, true
}

// Old reports whether the link l is an old occurrence.
func (s Set) Old(l *audit.Link) bool {
	k, ok := Key(l)
	return ok && s[k]
}

// Verify reports an error when ref does not name a commit of the git
// repository holding dir (or git is missing), before a long run needs it.
func Verify(ctx context.Context, dir, ref string) error {
	git, err := exec.LookPath("git")
	if err != nil {
		return fmt.Errorf("baseline %s: the git binary is needed: %w", ref, err)
	}
	if ref == "" || strings.HasPrefix(ref, "-") {
		return fmt.Errorf("baseline: %q is not a git revision", ref)
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, git, "-C", dir, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("baseline: %q is not a commit of the repository of %s (fetch it first?)", ref, dir)
	}
	return nil
}

// FromGit reads every HTML and Markdown document of the directory dir as
// it was at the git revision ref, extracts their links as a crawl of dir
// served at base would (same URLs, same targets), and returns their
// occurrences. It runs the git binary (git ls-tree and git cat-file
// --batch, reading the objects without checking anything out).
func FromGit(ctx context.Context, dir, ref, base string, opt extract.Options) (Set, error) {
	bu, err := url.Parse(base)
	if err != nil || !bu.IsAbs() {
		return nil, fmt.Errorf("baseline: base %q is not an absolute URL", base)
	}
	if !strings.HasSuffix(bu.Path, "/") {
		bu.Path += "/"
	}
	git, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("baseline %s: the git binary is needed: %w", ref, err)
	}
	if strings.HasPrefix(ref, "-") {
		return nil, fmt.Errorf("baseline: %q is not a git revision", ref)
	}
	var list, stderr bytes.Buffer
	ls := exec.CommandContext(ctx, git, "-C", dir, "ls-tree", "-r", "-z", ref, "--", ".")
	ls.Stdout, ls.Stderr = &list, &stderr
	if err := ls.Run(); err != nil {
		return nil, fmt.Errorf("baseline: git ls-tree %s: %w: %s", ref, err, strings.TrimSpace(stderr.String()))
	}
	type blob struct{ oid, path string }
	var blobs []blob
	for _, rec := range bytes.Split(list.Bytes(), []byte{0}) {
		meta, p, ok := bytes.Cut(rec, []byte{'\t'})
		f := strings.Fields(string(meta))
		if !ok || len(f) != 3 || f[1] != "blob" || !crawler.IsPage(string(p)) {
			continue
		}
		blobs = append(blobs, blob{oid: f[2], path: string(p)})
	}
	set := Set{}
	if len(blobs) == 0 {
		return set, nil
	}
	cat := exec.CommandContext(ctx, git, "-C", dir, "cat-file", "--batch")
	var in bytes.Buffer
	for _, b := range blobs {
		in.WriteString(b.oid + "\n")
	}
	cat.Stdin = &in
	stderr.Reset()
	cat.Stderr = &stderr
	out, err := cat.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("baseline: git cat-file: %w", err)
	}
	if err := cat.Start(); err != nil {
		return nil, fmt.Errorf("baseline: git cat-file: %w", err)
	}
	r := bufio.NewReaderSize(out, 1<<16)
	var readErr error
	for _, b := range blobs {
		body, err := readObject(r)
		if err != nil {
			readErr = fmt.Errorf("baseline: read %s at %s: %w", b.path, ref, err)
			break
		}
		pageURL := bu.ResolveReference(&url.URL{Path: b.path})
		for _, l := range links(body, b.path, pageURL, opt) {
			if k, ok := Key(&l); ok {
				set[k] = true
			}
		}
	}
	io.Copy(io.Discard, r)
	if err := cat.Wait(); err != nil && readErr == nil {
		readErr = fmt.Errorf("baseline: git cat-file: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	if readErr != nil {
		return nil, readErr
	}
	return set, nil
}

// readObject reads one "<oid> blob <size>\n<content>\n" answer of git
// cat-file --batch.
func readObject(r *bufio.Reader) ([]byte, error) {
	head, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	f := strings.Fields(head)
	if len(f) != 3 {
		return nil, fmt.Errorf("unexpected answer %q", strings.TrimSpace(head))
	}
	n, err := strconv.Atoi(f[2])
	if err != nil || n < 0 {
		return nil, fmt.Errorf("unexpected answer %q", strings.TrimSpace(head))
	}
	body := make([]byte, n+1) // content and its trailing LF
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return body[:n], nil
}

// links extracts the links of one document as the crawl does.
func links(body []byte, p string, pageURL *url.URL, opt extract.Options) []audit.Link {
	if markdown.IsPath(p) {
		return markdown.Parse(body, pageURL, opt).Extraction.Links
	}
	if ext := strings.ToLower(path.Ext(p)); ext == ".html" || ext == ".htm" {
		ex, _, err := extract.Parse(body, "text/html", pageURL, nil, opt)
		if err == nil {
			return ex.Links
		}
	}
	return nil
}
