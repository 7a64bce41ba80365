package main

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestParseMuffet(t *testing.T) {
	tests := []struct {
		name       string
		json       string
		pages      int
		broken     []string
		anchors    int
		unparsable int
		err        string
	}{{
		name: "nothing broken",
		json: "[]\n",
	}, {
		name: "null",
		json: "null",
	}, {
		name: "a URL broken from two pages and under two fragments, once, without its fragment",
		json: `[{"url":"http://h/a.html","links":[{"url":"http://h/gone#x","error":"404"},{"url":"http://h/gone","error":"404"}]},
		        {"url":"http://h/b.html","links":[{"url":"http://h/gone#y","error":"404"},{"url":"http://h:81/down","error":"dial tcp 127.0.0.1:81: connect: connection refused"}]}]`,
		pages:  2,
		broken: []string{"http://h/gone", "http://h:81/down"},
	}, {
		name: "a missing id is not a broken URL",
		json: `[{"url":"http://h/genindex.html","links":[{"url":"http://h/glossary.html#index-20","error":"id #index-20 not found"},
		        {"url":"http://h/glossary.html#index-19","error":"id #index-19 not found"}]}]`,
		pages:   1,
		anchors: 2,
	}, {
		name:   "the id error's form without a fragment counts as broken",
		json:   `[{"url":"http://h/","links":[{"url":"http://h/x","error":"id #a not found"}]}]`,
		pages:  1,
		broken: []string{"http://h/x"},
	}, {
		name:       "an unparsable link is counted apart",
		json:       `[{"url":"http://h/whatsnew/2.6.html","links":[{"url":"https://schemers.org/r5rs.html#%_sec_6.2","error":"parse \"https://schemers.org/r5rs.html#%_sec_6.2\": invalid URL escape \"%_s\""}]}]`,
		pages:      1,
		unparsable: 1,
	}, {
		name:   "--verbose: links that worked are left out",
		json:   `[{"url":"http://h/","links":[{"url":"http://h/ok","status":200},{"url":"http://h/bad#f","error":"500"}]}]`,
		pages:  1,
		broken: []string{"http://h/bad"},
	}, {
		name:   "a redirect that fails keeps the link's URL",
		json:   `[{"url":"http://h/","links":[{"url":"http://h/moved","error":"404 (following redirect http://h/new)"}]}]`,
		pages:  1,
		broken: []string{"http://h/moved"},
	}, {
		name: "not JSON",
		json: "failed to fetch root page: 404\n",
		err:  "muffet's JSON",
	}, {
		name: "an object",
		json: `{"url":"http://h/"}`,
		err:  "muffet's JSON",
	}, {
		name: "empty",
		json: "",
		err:  "muffet's JSON",
	}, {
		name: "more after the array",
		json: `[] []`,
		err:  "more after the array",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := parseMuffet(strings.NewReader(tt.json))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.pages != tt.pages || !slices.Equal(m.broken, tt.broken) || m.anchors != tt.anchors || m.unparsable != tt.unparsable {
				t.Errorf("got %d pages, broken %q, %d anchors, %d unparsable; want %d, %q, %d, %d",
					m.pages, m.broken, m.anchors, m.unparsable, tt.pages, tt.broken, tt.anchors, tt.unparsable)
			}
		})
	}
}

func FuzzParseMuffet(f *testing.F) {
	f.Add(`[{"url":"http://h/a.html","links":[{"url":"http://h/gone#x","error":"404"},{"url":"http://h/g#i","error":"id #i not found"}]}]`)
	f.Add(`[{"url":"http://h/","links":[{"url":"%zz","error":"parse"},{"url":"http://h/ok","status":200}]}]`)
	f.Add(`null`)
	f.Add(`[{"links":null}]`)
	f.Fuzz(func(t *testing.T, s string) {
		m, err := parseMuffet(strings.NewReader(s))
		if err != nil {
			return
		}
		if !slices.IsSorted(m.broken) {
			t.Errorf("broken not sorted: %q", m.broken)
		}
		for i, u := range m.broken {
			if i > 0 && m.broken[i-1] == u {
				t.Errorf("%q twice", u)
			}
			if p, err := url.Parse(u); err != nil {
				t.Errorf("broken %q: %v", u, err)
			} else if p.Fragment != "" {
				t.Errorf("broken %q has a fragment", u)
			}
		}
		if m.anchors < 0 || m.unparsable < 0 || m.pages < 0 {
			t.Errorf("negative counts: %+v", m)
		}
	})
}
