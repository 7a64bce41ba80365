package scaleout

import (
	"strings"
	"testing"
)

func TestCheckURL(t *testing.T) {
	for addr, want := range map[string]string{
		"nats://127.0.0.1:4222": "",
		"nats://u:p@host:4222":  "no credentials in the URL",
		"host-without-scheme":   "want nats://host:port",
		"nats://%zz":            "want nats://host:port",
	} {
		err := CheckURL(addr)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("CheckURL(%q) = %v, want %q", addr, err, want)
		}
	}
}
