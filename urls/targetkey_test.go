package urls

import "testing"

func TestTargetKey(t *testing.T) {
	for _, tc := range []struct {
		href, want string
		ok         bool
	}{
		{"https://Example.org:443/a/../b?q#frag", "https://example.org/b?q", true},
		{"http://u:pw@h/x#y", "http://u:***@h/x", true},
		{"mailto:a@example.org", "mailto:a@example.org", true},
		{"", "", false},
		{"   ", "", false},
		{"/relative", "", false},
		{"http://[::1", "", false},
		{"http://h:99999/", "", false},
	} {
		got, u, ok := TargetKey(tc.href)
		if got != tc.want || ok != tc.ok {
			t.Errorf("TargetKey(%q) = %q, %v; want %q, %v", tc.href, got, ok, tc.want, tc.ok)
		}
		if ok && u.Key() != got {
			t.Errorf("TargetKey(%q): URL key %q differs from the key %q", tc.href, u.Key(), got)
		}
	}
}
