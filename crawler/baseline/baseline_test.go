package baseline

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/crawler/extract"
	"github.com/linkrot/linkrot/crawler/markdown"
)

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.email=t@example.org", "-c", "user.name=T"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// linksOf extracts a document as the crawl of the directory at base does.
func linksOf(t *testing.T, name, content string) []audit.Link {
	u, _ := url.Parse("http://localhost/" + name)
	if markdown.IsPath(name) {
		return markdown.Parse([]byte(content), u, extract.Options{}).Extraction.Links
	}
	ex, _, err := extract.Parse([]byte(content), "text/html", u, nil, extract.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return ex.Links
}

func TestFromGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git binary needed: %v", err)
	}
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	write(t, dir, "docs/a.md", "# A\n\nRead [the spec](https://ex.org/spec) first.\n\nAnd [b](b.md).\n")
	write(t, dir, "docs/page.html", "<p>\n  <a href=\"https://ex.org/html\">h</a>\n</p>\n<p><a href=\"http://[::1\">invalid</a></p>\n")
	write(t, dir, "other/x.md", "[out of the audited directory](https://ex.org/outside)\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "base")
	set, err := FromGit(context.Background(), filepath.Join(dir, "docs"), "HEAD", "http://localhost/", extract.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, file, content string
		old                 []bool
	}{
		{"Unchanged", "a.md", "# A\n\nRead [the spec](https://ex.org/spec) first.\n\nAnd [b](b.md).\n", []bool{true, true}},
		// The paragraph moved to another file, re-indented.
		{"MovedAcrossFiles", "new/c.md", "Intro.\n\n   Read  [the spec](https://ex.org/spec) first.\n", []bool{true}},
		{"MovedIntoHTML", "moved.html", "<div>\n<a href=\"https://ex.org/html\">h</a></div>", []bool{false}},
		{"SameLineHTML", "z.html", "<p>\n  <a href=\"https://ex.org/html\">h</a>\n</p>", []bool{true}},
		// The same target on an edited line is introduced.
		{"EditedLine", "a.md", "Read [the spec](https://ex.org/spec) first, please.\n", []bool{false}},
		{"NewTarget", "a.md", "Read [the spec](https://ex.org/spec2) first.\n", []bool{false}},
		// A URL that does not parse has no target; its occurrence is the
		// URL as written on the same line.
		{"InvalidURLUnchanged", "page.html", "<p><a href=\"http://[::1\">invalid</a></p>", []bool{true}},
		{"InvalidURLMoved", "w.html", "<div>x</div>\n<p><a href=\"http://[::1\">invalid</a></p>", []bool{true}},
		{"InvalidURLEdited", "page.html", "<p><a href=\"http://[::2\">invalid</a></p>", []bool{false}},
		// Another directory of the repository is not the baseline.
		{"OutsideAuditedDir", "y.md", "[out of the audited directory](https://ex.org/outside)\n", []bool{false}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ls := linksOf(t, tt.file, tt.content)
			if len(ls) != len(tt.old) {
				t.Fatalf("%d links", len(ls))
			}
			for i := range ls {
				if got := set.Old(&ls[i]); got != tt.old[i] {
					t.Errorf("link %d (%s) old = %v, want %v", i, ls[i].Href, got, tt.old[i])
				}
			}
		})
	}
	if _, err := FromGit(context.Background(), dir, "no-such-ref", "http://localhost/", extract.Options{}); err == nil {
		t.Error("unknown revision: no error")
	}
	if _, err := FromGit(context.Background(), dir, "--output=/tmp/x", "http://localhost/", extract.Options{}); err == nil {
		t.Error("option-like revision accepted")
	}
}
