package reportcompare

import (
	"strings"
	"testing"
)

func mustNormalize(t *testing.T, s string) any {
	t.Helper()
	v, err := Normalize(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestDiff(t *testing.T) {
	for _, tc := range []struct {
		name      string
		a, b      string
		wantPaths []string
	}{
		{"times and ids ignored",
			`{"generated_at":"2026-01-01T00:00:00Z","run":{"id":1},"targets":[{"id":3,"url":"http://h/","verdict":"ok","checked_at":"x"}]}`,
			`{"generated_at":"2026-02-01T00:00:00Z","run":{"id":9},"targets":[{"id":4,"url":"http://h/","verdict":"ok","checked_at":"y"}]}`,
			nil},
		{"list order ignored",
			`{"targets":[{"url":"a","verdict":"ok"},{"url":"b","verdict":"gone"}]}`,
			`{"targets":[{"url":"b","verdict":"gone"},{"url":"a","verdict":"ok"}]}`,
			nil},
		{"verdict changed",
			`{"targets":[{"url":"a","verdict":"ok"}]}`,
			`{"targets":[{"url":"a","verdict":"not-found"}]}`,
			[]string{"targets[a].verdict"}},
		{"finding lost",
			`{"findings":[{"url":"a"},{"url":"a"}]}`,
			`{"findings":[{"url":"a"}]}`,
			[]string{"findings"}},
		{"count changed",
			`{"summary":{"broken_targets":3}}`,
			`{"summary":{"broken_targets":4}}`,
			[]string{"summary.broken_targets"}},
		{"field added",
			`{"summary":{}}`,
			`{"summary":{"new":1}}`,
			[]string{"summary.new"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Diff(mustNormalize(t, tc.a), mustNormalize(t, tc.b))
			var got []string
			for _, x := range d {
				got = append(got, x.Path)
			}
			if strings.Join(got, ",") != strings.Join(tc.wantPaths, ",") {
				t.Errorf("paths = %v, want %v (%+v)", got, tc.wantPaths, d)
			}
		})
	}
}

func TestNormalizeRejectsGarbage(t *testing.T) {
	if _, err := Normalize(strings.NewReader("{")); err == nil {
		t.Fatal("truncated JSON accepted")
	}
}
