package main

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for the children the bench
// runs: "plain" is the plain checker (as this program runs itself) and
// "fakemuffet" a muffet whose requests and output the test chooses.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "plain":
			if err := plain(os.Args[2:]); err != nil {
				log.Fatal(err)
			}
			os.Exit(0)
		case "fakemuffet":
			os.Exit(fakeMuffet())
		}
	}
	os.Exit(m.Run())
}

// fakeMuffet GETs each URL of the file $FAKEMUFFET_FETCH, copies the file
// $FAKEMUFFET_JSON to standard output and exits with $FAKEMUFFET_EXIT.
func fakeMuffet() int {
	if path := os.Getenv("FAKEMUFFET_FETCH"); path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			log.Fatal(err)
		}
		for _, u := range strings.Fields(string(b)) {
			resp, err := http.Get(u)
			if err != nil {
				log.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	if path := os.Getenv("FAKEMUFFET_JSON"); path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			log.Fatal(err)
		}
		os.Stdout.Write(b)
	}
	code, _ := strconv.Atoi(os.Getenv("FAKEMUFFET_EXIT"))
	return code
}

func TestRotation(t *testing.T) {
	tests := []struct {
		n, r int
		want []int
	}{
		{2, 0, []int{0, 1}}, {2, 1, []int{1, 0}}, {2, 2, []int{0, 1}},
		{3, 0, []int{0, 1, 2}}, {3, 1, []int{1, 2, 0}}, {3, 2, []int{2, 0, 1}}, {3, 3, []int{0, 1, 2}},
	}
	for _, tt := range tests {
		if got := rotation(tt.n, tt.r); !slices.Equal(got, tt.want) {
			t.Errorf("rotation(%d, %d) = %v, want %v", tt.n, tt.r, got, tt.want)
		}
	}
}

func TestPerHostLimit(t *testing.T) {
	tests := []struct {
		workers, perHost, want int
		err                    string
	}{
		{workers: 512, perHost: 0, want: 512},
		{workers: 16, perHost: 0, want: 16},
		{workers: 16, perHost: 16, want: 16},
		{workers: 512, perHost: 64, want: 64},
		{workers: 16, perHost: 512, err: "above -workers 16"},
		{workers: 16, perHost: -1, err: "at least 1"},
		{workers: 0, perHost: 0, err: "-workers 0"},
	}
	for _, tt := range tests {
		got, err := perHostLimit(tt.workers, tt.perHost)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("perHostLimit(%d, %d) = %d, %v; want an error with %q", tt.workers, tt.perHost, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("perHostLimit(%d, %d) = %d, %v; want %d", tt.workers, tt.perHost, got, err, tt.want)
		}
	}
}

func TestMuffetArgs(t *testing.T) {
	got := strings.Join(muffetArgs("http://127.0.0.1:1/index.html", 16, 8, 30, true), " ")
	want := "--max-connections 16 --max-connections-per-host 8 --timeout 30 --format json --exclude " + externalPattern + " http://127.0.0.1:1/index.html"
	if got != want {
		t.Errorf("with -dir: %q, want %q", got, want)
	}
	got = strings.Join(muffetArgs("http://127.0.0.1:1/p/0", 512, 512, 30, false), " ")
	if strings.Contains(got, "--exclude") || !strings.HasSuffix(got, " http://127.0.0.1:1/p/0") {
		t.Errorf("generated web: %q", got)
	}
	// The pattern skips named hosts only.
	re := regexp.MustCompile(externalPattern)
	for u, skip := range map[string]bool{"https://docs.python.org/3/": true, "http://example.com": true, "http://127.0.0.1:8080/a": false, "http://[::1]:80/": false} {
		if re.MatchString(u) != skip {
			t.Errorf("%s: skipped %v, want %v", u, !skip, skip)
		}
	}
}

func TestCompareBroken(t *testing.T) {
	names := []string{"plain", "linkrot", "muffet"}
	tests := []struct {
		name  string
		sets  [][]string
		agree bool
		line  string
		more  []string
	}{{
		name:  "none",
		sets:  [][]string{nil, nil, nil},
		agree: true,
		line:  "broken: 0 in all three, 0 only plain, 0 only linkrot, 0 only muffet\n",
	}, {
		name:  "the same",
		sets:  [][]string{{"a", "b"}, {"a", "b"}, {"a", "b"}},
		agree: true,
		line:  "broken: 2 in all three, 0 only plain, 0 only linkrot, 0 only muffet\n",
	}, {
		name: "each alone and two pairs",
		sets: [][]string{{"a", "p", "pl", "pm"}, {"a", "l", "pl"}, {"a", "m", "m2", "pm"}},
		line: "broken: 1 in all three, 1 only plain, 1 only linkrot, 2 only muffet, 1 all but muffet, 1 all but linkrot\n",
		more: []string{"         only muffet: m\n         only muffet: m2\n", "         all but muffet: pl\n", "         all but linkrot: pm\n"},
	}, {
		name: "found by one of three",
		sets: [][]string{{}, {}, {"x"}},
		line: "broken: 0 in all three, 0 only plain, 0 only linkrot, 1 only muffet\n         only muffet: x\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := compareBroken(names, tt.sets)
			if c.agree() != tt.agree {
				t.Errorf("agree = %v, want %v", c.agree(), tt.agree)
			}
			var b strings.Builder
			c.print(&b)
			if !strings.HasPrefix(b.String(), "       "+tt.line) {
				t.Errorf("printed %q, want it to start with %q", b.String(), "       "+tt.line)
			}
			for _, m := range tt.more {
				if !strings.Contains(b.String(), m) {
					t.Errorf("printed %q, lacks %q", b.String(), m)
				}
			}
		})
	}
	// More than five in a group: five, then the count.
	var many []string
	for i := range 7 {
		many = append(many, fmt.Sprintf("u%d", i))
	}
	var b strings.Builder
	compareBroken(names, [][]string{many, nil, nil}).print(&b)
	if strings.Count(b.String(), "only plain: u") != 5 || !strings.Contains(b.String(), "only plain: ... 7 in all") {
		t.Errorf("seven only plain: %q", b.String())
	}
}

// rowRE is a checker's row in the bench's table.
var rowRE = regexp.MustCompile(`(?m)^(\d+)\s+(plain|linkrot|muffet)\s+([\d.]+)\s+([\d.]+)\s+\d+MB\s+(\d+)\s+(\d+)\s+(\d+)$`)

// testBench serves testSite's pages through a counting web and returns a
// bench on it whose plain checker is this test binary and whose muffet,
// when script is not empty, is a shell script running it as fakemuffet.
func testBench(t *testing.T, script string) (*bench, *strings.Builder) {
	t.Helper()
	w := &web{hits: map[string]int{}}
	site, err := w.serve(true, testSiteHandler())
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	out := &strings.Builder{}
	b := &bench{w: w, out: out, stderr: os.Stderr, tmp: tmp, seed: site + "/index.html", skipExternal: true,
		workers: 8, perHost: 4, self: os.Args[0]}
	if script != "" {
		b.muffet = filepath.Join(tmp, "muffet")
		if err := os.WriteFile(b.muffet, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return b, out
}

// fakeLinkrot is a linkrot that takes wall and finds broken.
func fakeLinkrot(b *bench, wall time.Duration, requests int64, broken func() []string) checker {
	return checker{"linkrot", func(r int) (result, error) {
		res := result{wall: wall, requests: requests, broken: broken()}
		res.print(b.out, r, "linkrot")
		return res, nil
	}}
}

func TestRounds_WithFakeMuffet(t *testing.T) {
	dir := t.TempDir()
	argsFile := filepath.Join(dir, "args")
	b, out := testBench(t, fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"$@\" > %q\nexec %q fakemuffet\n", argsFile, os.Args[0]))
	site := strings.TrimSuffix(b.seed, "/index.html")
	// Muffet: the two broken pages (one under a fragment, and again from
	// a second page), one it alone finds, a missing id and a link it
	// could not parse; it fetches three URLs.
	json := fmt.Sprintf(`[{"url":"%[1]s/index.html","links":[{"url":"%[1]s/missing.html#frag","error":"404"},{"url":"%[1]s/b.html#nosuch","error":"id #nosuch not found"}]},
		{"url":"%[1]s/a.html","links":[{"url":"%[1]s/gone","error":"404"},{"url":"%[1]s/missing.html","error":"404"},
		{"url":"https://example.com/%%zz","error":"parse \"https://example.com/%%zz\": invalid URL escape \"%%zz\""},{"url":"%[1]s/only-muffet","error":"404"}]}]`, site)
	writeFile(t, filepath.Join(dir, "out.json"), json)
	writeFile(t, filepath.Join(dir, "fetch"), site+"/index.html\n"+site+"/a.html\n"+site+"/gone\n")
	t.Setenv("FAKEMUFFET_JSON", filepath.Join(dir, "out.json"))
	t.Setenv("FAKEMUFFET_FETCH", filepath.Join(dir, "fetch"))
	t.Setenv("FAKEMUFFET_EXIT", "1") // muffet's status when it found broken links

	cs := b.checkers()
	if len(cs) != 3 || cs[2].name != "muffet" {
		t.Fatalf("checkers with -muffet: %v", cs)
	}
	cs[1] = fakeLinkrot(b, 2*time.Second, 9, func() []string { return []string{site + "/gone", site + "/missing.html", site + "/only-linkrot"} })
	sum, err := b.rounds(3, cs)
	if err != nil {
		t.Fatal(err)
	}
	text := out.String()

	// Each round runs the three, rotated.
	rows := rowRE.FindAllStringSubmatch(text, -1)
	var order []string
	for _, r := range rows {
		order = append(order, r[1]+" "+r[2])
	}
	want := []string{"0 plain", "0 linkrot", "0 muffet", "1 linkrot", "1 muffet", "1 plain", "2 muffet", "2 plain", "2 linkrot"}
	if !slices.Equal(order, want) {
		t.Fatalf("rows in order %q, want %q\n%s", order, want, text)
	}
	// Muffet got the bench's limits, the plain checker's timeout, JSON and
	// the exclusion of external URLs.
	gotArgs, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Fields(string(gotArgs)), muffetArgs(b.seed, 8, 4, 30, true); !slices.Equal(got, want) {
		t.Errorf("muffet's arguments %q, want %q", got, want)
	}
	for _, r := range rows {
		if r[2] != "muffet" {
			continue
		}
		// Its requests, counted on the server; its broken URLs, three.
		if r[5] != "3" || r[6] != "3" || r[7] != "3" {
			t.Errorf("muffet's row: requests %s, unique %s, broken %s; want 3, 3, 3", r[5], r[6], r[7])
		}
	}
	var plainUnique string
	for _, r := range rows {
		if r[2] == "plain" {
			plainUnique = r[6]
		}
	}
	for _, want := range []string{
		"broken: 2 in all three, 0 only plain, 1 only linkrot, 1 only muffet\n",
		"only linkrot: " + site + "/only-linkrot\n",
		"only muffet: " + site + "/only-muffet\n",
		"muffet also reported 1 link to a missing id and 1 link it could not parse",
		fmt.Sprintf("requests/minimum linkrot 9/%s = ", plainUnique),
		fmt.Sprintf("muffet 3/%s = ", plainUnique),
		"broken the same in 0 of 3 rounds",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Count(text, "broken: 2 in all three") != 3 {
		t.Errorf("not one comparison a round:\n%s", text)
	}
	if len(sum.lrMuffet) != 3 || len(sum.muffetWall) != 3 {
		t.Fatalf("summary: %+v", sum)
	}
	for i := range 3 {
		if got, want := sum.lrMuffet[i], 2/sum.muffetWall[i]; got != want {
			t.Errorf("round %d: linkrot/muffet %.3f, want 2 s / %.3f s", i, got, sum.muffetWall[i])
		}
		if got, want := sum.lrPlain[i], 2/sum.plainWall[i]; got != want {
			t.Errorf("round %d: linkrot/plain %.3f, want 2 s / %.3f s", i, got, sum.plainWall[i])
		}
	}
	ml := regexp.MustCompile(`median wall linkrot/plain ([\d.]+)×, linkrot/muffet ([\d.]+)× \(plain ([\d.]+) s, linkrot 2\.00 s, muffet ([\d.]+) s\); median requests/minimum linkrot ([\d.]+)×, muffet ([\d.]+)×`).FindStringSubmatch(text)
	if ml == nil {
		t.Fatalf("no median line:\n%s", text)
	}
	if ml[2] != fmt.Sprintf("%.2f", median(sum.lrMuffet)) || ml[1] != fmt.Sprintf("%.2f", median(sum.lrPlain)) {
		t.Errorf("median line %q, rounds linkrot/plain %v, linkrot/muffet %v", ml[0], sum.lrPlain, sum.lrMuffet)
	}
}

func TestRounds_WithoutMuffetUnchanged(t *testing.T) {
	b, out := testBench(t, "")
	site := strings.TrimSuffix(b.seed, "/index.html")
	cs := b.checkers()
	if len(cs) != 2 {
		t.Fatalf("checkers without -muffet: %d", len(cs))
	}
	cs[1] = fakeLinkrot(b, time.Second, 5, func() []string { return []string{site + "/gone", site + "/missing.html", site + "/x"} })
	if _, err := b.rounds(2, cs); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	var order []string
	for _, r := range rowRE.FindAllStringSubmatch(text, -1) {
		order = append(order, r[1]+" "+r[2])
	}
	if want := []string{"0 plain", "0 linkrot", "1 linkrot", "1 plain"}; !slices.Equal(order, want) {
		t.Errorf("rows in order %q, want %q", order, want)
	}
	for _, want := range []string{"broken: 2 both, 0 only plain, 1 only linkrot\n", "only linkrot: " + site + "/x\n", "median wall ratio "} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "muffet") {
		t.Errorf("muffet mentioned without -muffet:\n%s", text)
	}
}

func TestRounds_MuffetFails(t *testing.T) {
	tests := []struct {
		name, exit, json, err string
	}{
		{"exit 2", "2", "[]", "exit status 2"},
		{"exit 1 without JSON (muffet's own failure)", "1", "", "muffet's JSON"},
		{"exit 0 with garbage", "0", "not json", "muffet's JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := testBench(t, fmt.Sprintf("#!/bin/sh\nexec %q fakemuffet\n", os.Args[0]))
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "out.json"), tt.json)
			t.Setenv("FAKEMUFFET_JSON", filepath.Join(dir, "out.json"))
			t.Setenv("FAKEMUFFET_FETCH", "")
			t.Setenv("FAKEMUFFET_EXIT", tt.exit)
			cs := b.checkers()
			cs[1] = fakeLinkrot(b, time.Second, 1, func() []string { return nil })
			_, err := b.rounds(1, cs)
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "muffet") {
				t.Errorf("err = %v, want one about muffet with %q", err, tt.err)
			}
		})
	}
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
