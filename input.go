package linkrot

import (
	"time"

	"github.com/linkrot/linkrot/audit"
)

// InputKind is the kind of what a run crawls. Its values are the run's
// mode as stored (audit.Run.Mode) and shown by linkrot runs.
type InputKind string

// The kinds of input.
const (
	// Site crawls recursively from Input.Seeds.
	Site InputKind = "site"
	// URLList fetches Input.Seeds, without recursion.
	URLList InputKind = "urls"
	// Sitemap crawls from Input.Sitemaps, with Input.Seeds as extra seeds.
	Sitemap InputKind = "sitemap"
	// Directory crawls the local directory Input.Dir served as
	// Input.Seeds[0] (Input.Base).
	Directory InputKind = "dir"
	// References checks the cited URLs of a reference list (linkrot
	// study): nothing is crawled; the study stores the list's links itself
	// and the run checks them (Input.Refs names the list, Input.Window the
	// study's window, so that each list and window is a run of its own).
	References InputKind = "study"
)

// Input is what a run crawls. Build it with SiteInput, URLListInput,
// SitemapInput or DirectoryInput; it is stored with the run's settings
// (its JSON names are part of the settings' fingerprint).
type Input struct {
	Kind     InputKind `json:"mode"`
	Seeds    []string  `json:"seeds"`
	Dir      string    `json:"dir,omitempty"`
	Sitemaps []string  `json:"sitemaps,omitempty"`
	// Files, for a Directory, are the only files of Dir crawled (as pages
	// of the base URL); empty: the whole directory.
	Files []string `json:"files,omitempty"`
	// Refs, for References, is the reference list's SHA-256 (hex) and
	// Window the study's window: with the other settings they identify
	// the study, so that a killed study of the same list resumes.
	Refs   string        `json:"refs,omitempty"`
	Window time.Duration `json:"window,omitempty"`
}

// SiteInput crawls one site (or several, as one run) from its URLs.
func SiteInput(urls ...string) Input { return Input{Kind: Site, Seeds: urls} }

// URLListInput fetches the pages of a list of URLs, without recursion.
func URLListInput(urls []string) Input { return Input{Kind: URLList, Seeds: urls} }

// ReferencesInput is the input of a study of the reference list whose
// SHA-256 is digest, with its representative-memento window.
func ReferencesInput(digest string, window time.Duration) Input {
	return Input{Kind: References, Refs: digest, Window: window}
}

// SitemapInput crawls from sitemaps, with extra seed URLs.
func SitemapInput(sitemaps []string, seeds ...string) Input {
	return Input{Kind: Sitemap, Sitemaps: sitemaps, Seeds: seeds}
}

// DirectoryInput crawls the local directory dir as if served under the
// URL base; with files, only those files of dir (slash-separated paths
// relative to it).
func DirectoryInput(dir, base string, files ...string) Input {
	return Input{Kind: Directory, Dir: dir, Seeds: []string{base}, Files: files}
}

// Base is the URL a Directory input is served as ("" for other kinds).
func (in Input) Base() string {
	if in.Kind != Directory || len(in.Seeds) == 0 {
		return ""
	}
	return in.Seeds[0]
}

// runSeeds are the seeds a run of the input stores (audit.Run.Seeds): a
// sitemap run's sitemaps then its seeds, a directory run's directory and
// base as one seed (audit.DirectorySeed).
func (in Input) runSeeds() []string {
	switch in.Kind {
	case Sitemap:
		return append(append([]string{}, in.Sitemaps...), in.Seeds...)
	case Directory:
		return []string{audit.DirectorySeed(in.Dir, in.Base())}
	}
	return in.Seeds
}
