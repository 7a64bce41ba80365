package sqlstore

import "testing"

func TestRedactAll_DSNParams(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"--db=postgres://u@h/db?password=s3cr3t", "--db=postgres://u@h/db?password=***"},
		{"postgresql://u@h/db?sslmode=disable&password=s3cr3t&x=1", "postgresql://u@h/db?sslmode=disable&password=***&x=1"},
		{"POSTGRES://u@h/db?SSLPassword=k3y", "POSTGRES://u@h/db?SSLPassword=***"},
		{"postgres://u:pw@h/db", "postgres://u:***@h/db"},
		// Not a PostgreSQL URL: a site's query parameter is its own business.
		{"https://site.example/login?password=x", "https://site.example/login?password=x"},
		{"--per-host=4", "--per-host=4"},
	} {
		got := redactAll([]string{tc.in})[0]
		if got != tc.want {
			t.Errorf("redactAll(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if redactAll(nil) != nil {
		t.Error("redactAll(nil) != nil")
	}
}
