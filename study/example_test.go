package study_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/study"
)

func ExampleEstimateBudget() {
	e := study.EstimateBudget(1_800_000, []study.ArchiveBudget{{Name: "the Internet Archive", PerMinute: 24}})
	fmt.Println(e.Sentence)
	// Output: 1,800,000 lookups at 24 a minute on the Internet Archive: 52 days; use a local CDX/WARC collection with --archive-warc or add archives
}

func ExampleJudge() {
	in, _ := study.Read(strings.NewReader(`@online{klein2014,
  url = {https://example.org/data},
  urldate = {2014-12-26},
}
@online{broken, year = {2014}}
`), "zotero.bib")
	fmt.Println(in.Format, len(in.References), in.Errors)
	res := study.Result{Verdict: audit.VerdictOK, Status: 200, Mementos: []study.Memento{
		{Datetime: time.Date(2014, 12, 20, 9, 0, 0, 0, time.UTC), URL: "https://archive.example/a", Drift: audit.BandMajor},
		{Datetime: time.Date(2015, 3, 1, 9, 0, 0, 0, time.UTC), URL: "https://archive.example/b", Drift: audit.BandMinor},
	}}
	r := study.Judge(in.References[0], study.Wave{Number: 1}, res, study.Params{})
	fmt.Println(r.Memento.URL, study.FormatDays(r.DistanceDays()), r.Representative, r.Drift, r.ReferenceRot)
	// Output:
	// bibtex 1 [line 5: entry "broken": no url field]
	// https://archive.example/a -5.63 true major true
}
