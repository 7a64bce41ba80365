package extract

import (
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func TestOnePassWhy(t *testing.T) {
	dir := os.Getenv("ONEPASS_DIR")
	if dir == "" {
		t.Skip()
	}
	counts := map[int]int{}
	ex := map[int]string{}
	var cur string
	passDebug = func(line int) { counts[line]++; ex[line] = cur }
	defer func() { passDebug = nil }()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
			return err
		}
		b, _ := os.ReadFile(p)
		cur = p
		u, _ := url.Parse("http://docs.test/x")
		runPass(b, u, nil, Options{})
		return nil
	})
	var ls []int
	for l := range counts {
		ls = append(ls, l)
	}
	sort.Ints(ls)
	for _, l := range ls {
		t.Logf("line %d: %d (%s)", l, counts[l], ex[l])
	}
}
