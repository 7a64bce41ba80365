package politeness

import (
	"net/url"
	"testing"
)

func TestHostRule_Matches(t *testing.T) {
	tests := []struct {
		match, url string
		want       bool
	}{
		{"example.org", "https://example.org/a", true},
		{"example.org", "http://EXAMPLE.org:8080/", true}, // any port, any case
		{"example.org", "https://www.example.org/", false},
		{"example.org:8080", "http://example.org:8080/", true},
		{"example.org:8080", "http://example.org/", false},
		{"example.org:443", "https://example.org/", true}, // default port
		{"*.example.org", "https://a.b.example.org/", true},
		{"*.example.org", "https://example.org/", true},
		{"*.example.org", "https://badexample.org/", false},
		{"127.0.0.1:9000", "http://127.0.0.1:9000/x", true},
		{"[::1]:9000", "http://[::1]:9000/", true},
		{"::1", "http://[::1]:9000/", true},
		{"", "https://example.org/", false},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := (HostRule{Match: tt.match}).Matches(u); got != tt.want {
			t.Errorf("%q matches %q = %v, want %v", tt.match, tt.url, got, tt.want)
		}
	}
	rules := []HostRule{{Match: "a.example", PerHost: 1}, {Match: "*.example", PerHost: 2}}
	if r, ok := HostRuleFor(rules, "a.example:443"); !ok || r.PerHost != 1 {
		t.Errorf("first rule should win: %+v %v", r, ok)
	}
	if _, ok := HostRuleFor(rules, "other.org:80"); ok {
		t.Error("a rule matched an unrelated host")
	}
}
