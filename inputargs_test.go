package linkrot

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseInput(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "a.md")
	other := filepath.Join(dir, "a.pdf")
	for _, p := range []string{page, other} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	list := filepath.Join(dir, "urls.txt")
	if err := os.WriteFile(list, []byte("# seeds\nhttps://a/\n\nhttps://b/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		a    InputArgs
		kind InputKind
		err  string
	}{
		{"Site", InputArgs{Args: []string{"https://a/"}}, Site, ""},
		{"Sites", InputArgs{Args: []string{"https://a/", "http://b/"}}, Site, ""},
		{"SitesNotURL", InputArgs{Args: []string{"https://a/", dir}}, "", "must all be http(s) URLs"},
		{"Dir", InputArgs{Args: []string{dir}}, Directory, ""},
		{"File", InputArgs{Args: []string{page}}, Directory, ""},
		{"Unsupported", InputArgs{Args: []string{other}}, "", "unsupported file type"},
		{"Missing", InputArgs{Args: []string{filepath.Join(dir, "no")}}, "", "no such file or directory"},
		{"MissingPage", InputArgs{Args: []string{filepath.Join(dir, "no.html")}}, "", "no such file"},
		{"None", InputArgs{}, "", "expected one URL or directory"},
		{"URLs", InputArgs{URLsFile: list}, URLList, ""},
		{"URLsStdin", InputArgs{URLsFile: "-", Stdin: strings.NewReader("https://a/\n")}, URLList, ""},
		{"URLsNotURL", InputArgs{URLsFile: "-", Stdin: strings.NewReader("a/b\n")}, "", "is not an http(s) URL"},
		{"URLsEmpty", InputArgs{URLsFile: "-", Stdin: strings.NewReader("# none\n")}, "", "no URLs"},
		{"URLsAndArg", InputArgs{URLsFile: list, Args: []string{"https://a/"}}, "", "takes no positional argument"},
		{"Sitemap", InputArgs{Sitemaps: []string{"https://a/sitemap.xml"}, Args: []string{"https://a/x"}}, Sitemap, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := ParseInput(tc.a)
			if tc.err != "" {
				var se *SettingsError
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &se) {
					t.Errorf("%+v, %v; want a settings error with %q", in, err, tc.err)
				}
				return
			}
			if err != nil || in.Kind != tc.kind {
				t.Errorf("%+v, %v; want kind %s", in, err, tc.kind)
			}
		})
	}
	in, _ := ParseInput(InputArgs{Args: []string{page}, Base: "https://docs/"})
	if in.Base() != "https://docs/" || len(in.Files) != 1 {
		t.Errorf("file input = %+v", in)
	}
}
