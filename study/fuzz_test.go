package study

import (
	"strings"
	"testing"
)

// fuzzParse checks what every parser must do with any input: no panic,
// every error with a line inside the input and a reason, every reference
// valid and in input order.
func fuzzParse(t *testing.T, data []byte, f Format) {
	in, err := Parse(data, "fuzz", f)
	if err != nil {
		return
	}
	lines := strings.Count(string(data), "\n") + 1
	for _, e := range in.Errors {
		if e.Line < 1 || e.Line > lines+1 || e.Reason == "" {
			t.Fatalf("%s: bad RowError %+v for %d lines", f, e, lines)
		}
	}
	last := 0
	for _, r := range in.References {
		if r.Line < last || r.Line < 1 || r.Line > lines {
			t.Fatalf("%s: reference line %d after %d (of %d)", f, r.Line, last, lines)
		}
		last = r.Line
		if _, err := checkURL(r.URL); err != nil || r.CitedAt.IsZero() {
			t.Fatalf("%s: invalid reference %+v", f, r)
		}
	}
}

func FuzzCSV(f *testing.F) {
	f.Add([]byte("url,cited_at,id\nhttps://a.test/,2014-05-03,x\n"))
	f.Add([]byte("url,cited_at\n\"https://a.test/\nx\",2014\n\"open"))
	f.Add([]byte("URL,CITED_AT\nhttps://a.test/,2014-05-03T10:00:00Z\nbad,row,\"x\"y\n"))
	f.Fuzz(func(t *testing.T, b []byte) { fuzzParse(t, b, FormatCSV) })
}

func FuzzJSONL(f *testing.F) {
	f.Add([]byte(`{"url":"https://a.test/","cited_at":"2014-05-03"}` + "\n{\n"))
	f.Add([]byte(`{"url":"https://a.test/","cited_at":2014,"id":1e400}`))
	f.Fuzz(func(t *testing.T, b []byte) { fuzzParse(t, b, FormatJSONL) })
}

func FuzzBibTeX(f *testing.F) {
	f.Add([]byte("@misc{a, url = {https://a.test/}, year = 2014}\n@string{x = \"y\"}\n@misc(b, url = \"https://b.test/\" # x, urldate = {2014-01-01})"))
	f.Add([]byte("@comment{ @ } @preamble{\"{\"} @misc{c, url = {\\url{https://c.test/}}, year = {20"))
	f.Add([]byte("@misc{d,\n url = {https://d.test/},\n month = jan, year = 2000 }\n@\n@@misc{"))
	f.Fuzz(func(t *testing.T, b []byte) { fuzzParse(t, b, FormatBibTeX) })
}

func FuzzCSLJSON(f *testing.F) {
	f.Add([]byte(`[{"id":"a","URL":"https://a.test/","issued":{"date-parts":[[2014,5,3]]}},{"URL":"x"}]`))
	f.Add([]byte(`[{"id":1,"URL":"https://a.test/","accessed":{"raw":"2014-05"}}, 3, [`))
	f.Fuzz(func(t *testing.T, b []byte) { fuzzParse(t, b, FormatCSLJSON) })
}
