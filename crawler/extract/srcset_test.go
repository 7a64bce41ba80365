package extract

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// fmtCandidates writes candidates as "url@offset descriptors".
func fmtCandidates(cs []SrcsetCandidate) []string {
	out := []string{}
	for _, c := range cs {
		s := fmt.Sprintf("%s@%d", c.URL, c.Offset)
		if c.Width > 0 {
			s += fmt.Sprintf(" %dw", c.Width)
		}
		if c.Height > 0 {
			s += fmt.Sprintf(" %dh", c.Height)
		}
		if c.HasDensity {
			s += fmt.Sprintf(" %gx", c.Density)
		}
		out = append(out, s)
	}
	return out
}

func TestParseSrcset(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  []string
		codes []string
	}{
		{"Empty", "", []string{}, []string{}},
		{"Blank", " \t\n", []string{}, []string{}},
		{"One", "a.png", []string{"a.png@0"}, []string{}},
		{"Densities", "a.png 1x, b.png 2x", []string{"a.png@0 1x", "b.png@10 2x"}, []string{}},
		{"Widths", "s.jpg 480w,m.jpg 800w", []string{"s.jpg@0 480w", "m.jpg@11 800w"}, []string{}},
		{"FractionalDensity", "a.png 1.5x, b.png .5x, c.png 1e1x", []string{"a.png@0 1.5x", "b.png@12 0.5x", "c.png@23 10x"}, []string{}},
		{"OddSpacing", "  \n a.png\t 1x ,\f\r b.png   2x  ", []string{"a.png@4 1x", "b.png@18 2x"}, []string{}},
		// A URL is everything up to whitespace: its commas are its own,
		// except trailing ones, which end the candidate.
		{"CommaInURL", "a,b.png 1x, c.png", []string{"a,b.png@0 1x", "c.png@12"}, []string{}},
		{"NoSpaceAfterComma", "a.png,b.png", []string{"a.png,b.png@0"}, []string{}},
		{"TrailingCommaEndsURL", "a.png, b.png", []string{"a.png@0", "b.png@7"}, []string{}},
		{"TrailingComma", "a.png 1x,", []string{"a.png@0 1x"}, []string{}},
		{"DoubledTrailingComma", "a.png,, b.png", []string{"a.png@0", "b.png@8"}, []string{CodeLenientSrcset}},
		{"LeadingComma", ", a.png", []string{"a.png@2"}, []string{CodeLenientSrcset}},
		{"DoubledComma", "a.png 1x,, b.png 2x", []string{"a.png@0 1x", "b.png@11 2x"}, []string{CodeLenientSrcset}},
		{"DataURL", "data:image/png;base64,iVBO 1x", []string{"data:image/png;base64,iVBO@0 1x"}, []string{}},
		{"WidthAndHeight", "a.png 100w 50h", []string{"a.png@0 100w 50h"}, []string{}},
		// A comma inside parentheses does not end the descriptors.
		{"Parens", "a.png 1x (future, stuff), b.png 2x", []string{"b.png@26 2x"}, []string{CodeInvalidSrcset}},
		{"ParensUnclosed", "a.png (x", []string{}, []string{CodeInvalidSrcset}},
		{"UnknownDescriptor", "a.png 2y, b.png", []string{"b.png@10"}, []string{CodeInvalidSrcset}},
		{"ZeroWidth", "a.png 0w", []string{}, []string{CodeInvalidSrcset}},
		{"ZeroDensity", "a.png 0x", []string{"a.png@0 0x"}, []string{}},
		{"NegativeDensity", "a.png -1x", []string{}, []string{CodeInvalidSrcset}},
		{"UpperCaseUnit", "a.png 2X", []string{}, []string{CodeInvalidSrcset}},
		{"PlusSign", "a.png +2x", []string{}, []string{CodeInvalidSrcset}},
		{"DotWithoutFraction", "a.png 1.x", []string{}, []string{CodeInvalidSrcset}},
		{"WidthAndDensity", "a.png 100w 2x", []string{}, []string{CodeInvalidSrcset}},
		{"TwoDensities", "a.png 1x 2x", []string{}, []string{CodeInvalidSrcset}},
		{"HeightWithoutWidth", "a.png 50h", []string{}, []string{CodeInvalidSrcset}},
		{"HeightAndDensity", "a.png 50h 1x", []string{}, []string{CodeInvalidSrcset}},
		{"HugeWidth", "a.png 99999999999999999999w", []string{"a.png@0 2147483647w"}, []string{}},
		{"HugeDensity", "a.png 1e999x", []string{"a.png@0 +Infx"}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, diags := ParseSrcset(tt.in)
			if got := fmtCandidates(cs); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseSrcset(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got := codes(diags); !reflect.DeepEqual(got, tt.codes) {
				t.Errorf("ParseSrcset(%q) diagnostics %q, want %q (%v)", tt.in, got, tt.codes, diags)
			}
			for _, c := range cs {
				if tt.in[c.Offset:c.Offset+len(c.URL)] != c.URL {
					t.Errorf("candidate %q not at its offset %d", c.URL, c.Offset)
				}
			}
		})
	}
}

func TestParseSrcset_Bounded(t *testing.T) {
	in := strings.Repeat("a.png 1x, ", MaxValues+5)
	cs, diags := ParseSrcset(in)
	if len(cs) != MaxValues || len(diags) != 1 || diags[0].Code != CodeTooManyValues {
		t.Errorf("%d candidates, diagnostics %v; want %d and %s", len(cs), codes(diags), MaxValues, CodeTooManyValues)
	}
}

// FuzzParseSrcset checks that ParseSrcset never fails and that each
// candidate is a non-empty URL without whitespace, found at its offset,
// with descriptors the standard allows.
func FuzzParseSrcset(f *testing.F) {
	for _, s := range []string{"a.png 1x, b.png 2x", "a,b.png 100w 50h,,", ", x (a, b) 1x", "a 1e5x", "a -0x", "\xff 1x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		cs, diags := ParseSrcset(in)
		if len(cs) > MaxValues {
			t.Fatalf("%d candidates", len(cs))
		}
		for _, c := range cs {
			if c.URL == "" || strings.ContainsAny(c.URL, " \t\n\f\r") || strings.HasSuffix(c.URL, ",") {
				t.Errorf("candidate URL %q", c.URL)
			}
			if c.Offset < 0 || c.Offset+len(c.URL) > len(in) || in[c.Offset:c.Offset+len(c.URL)] != c.URL {
				t.Errorf("candidate %q at offset %d", c.URL, c.Offset)
			}
			if c.Width < 0 || c.Height < 0 || c.Density < 0 || c.HasDensity && (c.Width > 0 || c.Height > 0) || c.Height > 0 && c.Width == 0 {
				t.Errorf("candidate %+v", c)
			}
		}
		for _, d := range diags {
			if d.Field != "srcset" || d.Code == "" || !utf8.ValidString(d.Message) {
				t.Errorf("diagnostic %+v", d)
			}
		}
	})
}
