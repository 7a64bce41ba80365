package audit

import "testing"

func TestRuleOf(t *testing.T) {
	tests := []struct {
		element, attr string
		rel           []string
		kind          LinkKind
		checked, page bool
	}{
		{"a", "href", nil, KindNavigation, true, true},
		{"area", "href", []string{"nofollow"}, KindNavigation, true, true},
		{"meta", "content", nil, KindNavigation, true, true},
		{"blockquote", "cite", nil, KindNavigation, true, true},
		{"q", "cite", nil, KindNavigation, true, true},
		{"del", "cite", nil, KindNavigation, true, true},
		{"ins", "cite", nil, KindNavigation, true, true},
		{"iframe", "src", nil, KindResource, true, true},
		{"link", "href", []string{"stylesheet"}, KindResource, true, false},
		{"link", "href", nil, KindResource, true, false},
		{"link", "href", []string{"preload"}, KindResource, true, false},
		{"link", "href", []string{"modulepreload"}, KindResource, true, false},
		{"link", "href", []string{"prefetch"}, KindResource, true, false},
		{"link", "href", []string{"dns-prefetch"}, KindHint, false, false},
		{"link", "href", []string{"preconnect"}, KindHint, false, false},
		{"link", "href", []string{"preconnect", "dns-prefetch"}, KindHint, false, false},
		// A hint that is also a fetch is a fetch.
		{"link", "href", []string{"preconnect", "stylesheet"}, KindResource, true, false},
		{"img", "src", nil, KindResource, true, false},
		{"img", "srcset", nil, KindResource, true, false},
		{"source", "src", nil, KindResource, true, false},
		{"source", "srcset", nil, KindResource, true, false},
		{"script", "src", nil, KindResource, true, false},
		{"video", "src", nil, KindResource, true, false},
		{"video", "poster", nil, KindResource, true, false},
		{"audio", "src", nil, KindResource, true, false},
		{"track", "src", nil, KindResource, true, false},
		{"embed", "src", nil, KindResource, true, false},
		{"object", "data", nil, KindResource, true, false},
		{"input", "src", nil, KindResource, true, false},
		// Not in the table: a checked resource, not a page.
		{"frame", "src", nil, KindResource, true, false},
		{"a", "ping", nil, KindResource, true, false},
	}
	for _, tt := range tests {
		r := RuleOf(tt.element, tt.attr, tt.rel)
		if r.Kind != tt.kind || r.Checked() != tt.checked || r.Page != tt.page || r.Element != tt.element || r.Attr != tt.attr {
			t.Errorf("RuleOf(%s, %s, %v) = %+v (checked %v), want %s checked %v page %v", tt.element, tt.attr, tt.rel, r, r.Checked(), tt.kind, tt.checked, tt.page)
		}
		l := Link{Element: tt.element, Attr: tt.attr, Rel: tt.rel}
		if l.Checked() != tt.checked {
			t.Errorf("%s %s %v: Checked %v", tt.element, tt.attr, tt.rel, l.Checked())
		}
		if tt.kind != KindHint && FragmentChecked(tt.element, tt.attr) != tt.page {
			t.Errorf("FragmentChecked(%s, %s) = %v", tt.element, tt.attr, !tt.page)
		}
	}
}
