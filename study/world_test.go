package study

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// The test world: a few thousand synthetic references with known truth.
// Every URL has a live kind; every reference a design that places its
// own mementos at known distances from its citation day. References to
// the same URL are cited at least 100 days apart and their mementos sit
// within 15 days of their citation, so the nearest memento of a
// reference is the one its design placed. Mementos are at noon, so a
// memento d days before the cited day is d - 0.5 days before it and one d
// days after is d - 0.5 days after its end: representative iff d <= 7.

type liveKind struct {
	verdict audit.Verdict
	status  int
	broken  Tri // the truth, written here rather than derived
}

var liveKinds = []liveKind{
	{audit.VerdictOK, 200, No},
	{audit.VerdictOK, 200, No},
	{audit.VerdictOK, 200, No},
	{audit.VerdictMoved, 200, No},
	{audit.VerdictRedirected, 200, No},
	{audit.VerdictNotFound, 404, Yes},
	{audit.VerdictGone, 410, Yes},
	{audit.VerdictDNSError, 0, Yes},
	{audit.VerdictSoft404, 200, Yes},
	{audit.VerdictParked, 200, Yes},
	{audit.VerdictServerError, 503, Yes},
	{audit.VerdictTimeout, 0, Unknown},
	{audit.VerdictRateLimited, 429, Unknown},
	{audit.VerdictBlocked, 403, Unknown},
}

// design is where a reference's mementos are: kind "exact" (on the cited
// day), "before"/"after" d days, "tie" (d days before and after), or
// "none" (the URL is never archived).
type design struct {
	kind string
	d    int
	band string // drift band of the designed memento ("" = not compared)
}

type truthRow struct {
	ref            Reference
	wave           int
	kind           liveKind
	mementoURL     string
	mementoAt      time.Time
	distance       string
	representative bool
	drift          string
	refRot         Tri
}

type world struct {
	refs  []Reference
	waves []Wave
	truth []truthRow // reference-major, wave-minor, as Build
}

var bands = []string{audit.BandUnchanged, audit.BandMinor, audit.BandMajor, audit.BandOffTopic, ""}

func noon(t time.Time) time.Time { return t.Add(12 * time.Hour) }

func newWorld(nURLs int, seed uint64) *world {
	rng := rand.New(rand.NewPCG(seed, 7))
	w := &world{}
	checked := []time.Time{time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
	for i := range checked {
		w.waves = append(w.waves, Wave{Number: i + 1, CheckedAt: checked[i], Results: map[string]Result{}})
	}
	type pending struct {
		ref   Reference
		des   design
		ms    []Memento
		kinds [2]liveKind
	}
	var all []pending
	for u := 0; u < nURLs; u++ {
		url := fmt.Sprintf("https://site%d.test/page/%d?q=%d", u%97, u, rng.IntN(1000))
		archived := rng.IntN(6) != 0
		k1 := liveKinds[rng.IntN(len(liveKinds))]
		k2 := k1
		if rng.IntN(3) == 0 { // the second wave finds a third of the URLs changed
			k2 = liveKinds[rng.IntN(len(liveKinds))]
		}
		nRefs := 1 + rng.IntN(4)
		start := time.Date(2005+rng.IntN(14), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), 0, 0, 0, 0, time.UTC)
		var res [2]Result
		for wi, k := range []liveKind{k1, k2} {
			res[wi] = Result{URL: url, Verdict: k.verdict, Status: k.status}
		}
		cited := start
		for r := 0; r < nRefs; r++ {
			if r > 0 {
				cited = cited.AddDate(0, 0, 100+rng.IntN(200))
			}
			ref := Reference{URL: url, CitedAt: CitedAt{From: cited, To: cited.AddDate(0, 0, 1), Precision: Day},
				ID: fmt.Sprintf("doi-10.1000-%d-%d", u, r), Title: fmt.Sprintf("Title %d/%d", u, r)}
			if g := rng.IntN(6); g > 0 {
				ref.Group = fmt.Sprintf("Journal %c", 'A'+g-1)
			}
			var des design
			band := bands[rng.IntN(len(bands))]
			switch x := rng.IntN(10); {
			case !archived:
				des = design{kind: "none"}
			case x == 0:
				des = design{kind: "exact", band: band}
			case x <= 3:
				des = design{kind: "before", d: 1 + rng.IntN(15), band: band}
			case x <= 6:
				des = design{kind: "after", d: 1 + rng.IntN(15), band: band}
			default:
				des = design{kind: "tie", d: 1 + rng.IntN(12), band: band}
			}
			var ms []Memento
			mk := func(at time.Time, b string) Memento {
				return Memento{Datetime: noon(at), URL: "https://archive.test/web/" + noon(at).Format("20060102150405") + "/" + url, Archive: "archive.test", Drift: b}
			}
			switch des.kind {
			case "exact":
				ms = append(ms, mk(cited, band))
			case "before":
				ms = append(ms, mk(cited.AddDate(0, 0, -des.d), band))
			case "after":
				ms = append(ms, mk(cited.AddDate(0, 0, des.d), band))
			case "tie":
				// The after one is listed first and off-topic: the before
				// one must win the tie.
				ms = append(ms, mk(cited.AddDate(0, 0, des.d), audit.BandOffTopic), mk(cited.AddDate(0, 0, -des.d), band))
			}
			all = append(all, pending{ref: ref, des: des, ms: ms, kinds: [2]liveKind{k1, k2}})
			res[0].Mementos = append(res[0].Mementos, ms...)
		}
		// The TimeMap is the same in both waves, shuffled differently.
		res[1].Mementos = append([]Memento(nil), res[0].Mementos...)
		rng.Shuffle(len(res[1].Mementos), func(i, j int) { res[1].Mementos[i], res[1].Mementos[j] = res[1].Mementos[j], res[1].Mementos[i] })
		w.waves[0].Results[url] = res[0]
		w.waves[1].Results[url] = res[1]
	}
	// Interleave the URLs' references so that a URL's citations are not
	// adjacent in the input.
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	for i, p := range all {
		p.ref.Line = i + 2
		w.refs = append(w.refs, p.ref)
		for wi := range w.waves {
			t := truthRow{ref: p.ref, wave: wi + 1, kind: p.kinds[wi], drift: DriftUnmeasured}
			var m *Memento
			switch p.des.kind {
			case "exact", "before", "after":
				m = &p.ms[0]
			case "tie":
				m = &p.ms[1]
			}
			if m != nil {
				t.mementoURL, t.mementoAt = m.URL, m.Datetime
				switch p.des.kind {
				case "exact":
					t.distance = "0"
				case "before", "tie":
					t.distance = strconv.FormatFloat(-(float64(p.des.d) - 0.5), 'f', -1, 64)
				case "after":
					t.distance = strconv.FormatFloat(float64(p.des.d)-0.5, 'f', -1, 64)
				}
				t.representative = p.des.kind == "exact" || p.des.d <= 7
			}
			if t.kind.broken == No && t.representative && p.des.band != "" {
				t.drift = p.des.band
			}
			switch {
			case t.kind.broken == Yes, t.drift == audit.BandMajor, t.drift == audit.BandOffTopic:
				t.refRot = Yes
			case t.kind.broken == No && t.drift != DriftUnmeasured:
				t.refRot = No
			default:
				t.refRot = Unknown
			}
			w.truth = append(w.truth, t)
		}
	}
	return w
}

func (t truthRow) record(checked time.Time) []string {
	status := ""
	if t.kind.status != 0 {
		status = strconv.Itoa(t.kind.status)
	}
	mAt, archive := "", ""
	if t.mementoURL != "" {
		mAt, archive = t.mementoAt.Format(time.RFC3339), "archive.test"
	}
	return []string{t.ref.ID, t.ref.URL, t.ref.CitedAt.From.Format("2006-01-02"), t.ref.Group, t.ref.Title,
		strconv.Itoa(t.wave), checked.Format(time.RFC3339), string(t.kind.verdict), status, t.kind.broken.String(),
		t.mementoURL, mAt, t.distance, archive, strconv.FormatBool(t.representative), t.drift, t.refRot.String()}
}

func readCSVFile(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

func TestWorldReferencesAndSummary(t *testing.T) {
	w := newWorld(1200, 27)
	if len(w.refs) < 2000 {
		t.Fatalf("world has only %d references", len(w.refs))
	}
	in := &Input{Name: "world.csv", Format: FormatCSV, Digest: strings.Repeat("0", 64), References: w.refs,
		Errors: []RowError{{Line: 5, Reason: "url is missing"}}}
	s := &Study{Input: in, Waves: w.waves, Params: Params{Archives: []string{"archive.test"}, Version: "test",
		Created: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)}}
	dir := t.TempDir()
	if err := WriteDir(dir, s); err != nil {
		t.Fatal(err)
	}

	// references.csv: every row as the truth says.
	recs := readCSVFile(t, filepath.Join(dir, "references.csv"))
	if !reflect.DeepEqual(recs[0], ReferenceColumns) {
		t.Fatalf("header %v", recs[0])
	}
	if len(recs)-1 != len(w.truth) {
		t.Fatalf("%d rows, want %d", len(recs)-1, len(w.truth))
	}
	bad := 0
	for i, tr := range w.truth {
		want := tr.record(w.waves[tr.wave-1].CheckedAt)
		if got := recs[i+1]; !reflect.DeepEqual(got, want) {
			if bad++; bad < 10 {
				t.Errorf("row %d:\n got %q\nwant %q", i+1, got, want)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d rows differ from the truth", bad)
	}

	// summary.csv: the shares counted from the truth, Wilson intervals.
	type acc struct{ n, rotK, rotN, drK, drN, rrK, rrN, repK, nrK, nrN int }
	want := map[string]*acc{}
	var order []string
	add := func(key string, tr truthRow, prev *truthRow) {
		a, ok := want[key]
		if !ok {
			a = &acc{}
			want[key] = a
			order = append(order, key)
		}
		a.n++
		if tr.kind.broken != Unknown {
			a.rotN++
			if tr.kind.broken == Yes {
				a.rotK++
			}
		}
		if tr.kind.broken == No && tr.drift != DriftUnmeasured {
			a.drN++
			if tr.drift == audit.BandMajor || tr.drift == audit.BandOffTopic {
				a.drK++
			}
		}
		if tr.refRot != Unknown {
			a.rrN++
			if tr.refRot == Yes {
				a.rrK++
			}
		}
		if tr.representative {
			a.repK++
		}
		if prev != nil && prev.kind.broken == No && tr.kind.broken != Unknown {
			a.nrN++
			if tr.kind.broken == Yes {
				a.nrK++
			}
		}
	}
	for i, tr := range w.truth {
		var prev *truthRow
		if tr.wave == 2 {
			prev = &w.truth[i-1]
		}
		add(fmt.Sprintf("%d|overall|", tr.wave), tr, prev)
		add(fmt.Sprintf("%d|year|%d", tr.wave, tr.ref.CitedAt.Year()), tr, prev)
		if tr.ref.Group != "" {
			add(fmt.Sprintf("%d|group|%s", tr.wave, tr.ref.Group), tr, prev)
		}
	}
	sum := readCSVFile(t, filepath.Join(dir, "summary.csv"))
	if !reflect.DeepEqual(sum[0], SummaryColumns) {
		t.Fatalf("summary header %v", sum[0])
	}
	if len(sum)-1 != len(want) {
		t.Fatalf("%d summary rows, want %d", len(sum)-1, len(want))
	}
	f6 := func(x float64) string { return strconv.FormatFloat(x, 'f', 6, 64) }
	share := func(k, n int) []string {
		if n == 0 {
			return []string{"0", "0", "", "", ""}
		}
		lo, hi := Wilson(k, n, Z95)
		return []string{strconv.Itoa(k), strconv.Itoa(n), f6(float64(k) / float64(n)), f6(lo), f6(hi)}
	}
	years := map[int]map[string]bool{}
	for _, rec := range sum[1:] {
		key := strings.Join(rec[:3], "|")
		a, ok := want[key]
		if !ok {
			t.Errorf("summary row %v is not in the truth", rec)
			continue
		}
		exp := append([]string{rec[0], rec[1], rec[2], strconv.Itoa(a.n)}, share(a.rotK, a.rotN)...)
		exp = append(exp, share(a.drK, a.drN)...)
		exp = append(exp, share(a.rrK, a.rrN)...)
		exp = append(exp, share(a.repK, a.n)...)
		exp = append(exp, share(a.nrK, a.nrN)...)
		if !reflect.DeepEqual(rec, exp) {
			t.Errorf("summary row:\n got %q\nwant %q", rec, exp)
		}
		if rec[1] == "year" {
			wv, _ := strconv.Atoi(rec[0])
			if years[wv] == nil {
				years[wv] = map[string]bool{}
			}
			years[wv][rec[2]] = true
		}
	}
	// Longitudinal: the second wave differs from the first, and some
	// references rotted between them.
	if reflect.DeepEqual(want["1|overall|"], want["2|overall|"]) || want["2|overall|"].nrK == 0 || want["1|overall|"].nrN != 0 {
		t.Errorf("the world does not exercise waves: %+v %+v", want["1|overall|"], want["2|overall|"])
	}

	// study.json: counts, window, waves, malformed rows.
	var meta Meta
	b, err := os.ReadFile(filepath.Join(dir, "study.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Counts.References != len(w.refs) || meta.Counts.Rows != len(w.truth) || meta.Counts.Malformed != 1 ||
		meta.Counts.DistinctURLs != 1200 || meta.WindowDays != 7 || len(meta.Waves) != 2 ||
		meta.Waves[1].CheckedAt != "2026-03-01T00:00:00Z" || meta.Input.SHA256 != in.Digest ||
		len(meta.Malformed) != 1 || meta.Malformed[0].Line != 5 || meta.Version != "test" || meta.Thresholds.OffTopicCosine == 0 {
		t.Errorf("study.json: %s", b)
	}

	// index.html: one chart point per citation year and wave with a
	// share, as the browser test checks in Chromium.
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range shareNames {
		n := 0
		for _, s := range Summarize(Build(w.refs, w.waves, s.Params)) {
			if s.Scope == ScopeYear && s.shares()[i].N > 0 {
				n++
			}
		}
		chart := string(page[bytes.Index(page, []byte(`data-share="`+name+`"`)):])
		chart = chart[:strings.Index(chart, "</svg>")]
		if got := strings.Count(chart, `<circle class="pt`); got != n || n == 0 {
			t.Errorf("chart %s: %d points, want %d", name, got, n)
		}
	}
}
