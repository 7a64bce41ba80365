package dashboard

import "testing"

// TestLinkable: the one URL parser decides which URLs become links; a
// URL net/url rejects but browsers follow is one.
func TestLinkable(t *testing.T) {
	for _, tc := range []struct {
		u    string
		want bool
	}{
		{"https://example.org/a", true},
		{"https://example.org/a%zz?q=%", true},
		{"mailto:someone@example.org", false},
		{"javascript:alert(1)", false},
		{"http://[::1", false},
		{"http://example.org:99999/", false},
		{"/relative", false},
	} {
		if got := linkable(tc.u); got != tc.want {
			t.Errorf("linkable(%q) = %v, want %v", tc.u, got, tc.want)
		}
	}
}
