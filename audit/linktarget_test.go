package audit

import (
	"encoding/json"
	"testing"
)

func TestLinkTarget(t *testing.T) {
	var zero Link
	if _, _, known := zero.Target(); known {
		t.Fatal("a Link without SetTarget has a known target")
	}
	// "" is an href too: its key (none) can be recorded.
	zero.SetTarget("", false)
	if k, ok, known := zero.Target(); !known || ok || k != "" {
		t.Fatalf("empty href: Target() = %q, %v, %v; want \"\", false, true", k, ok, known)
	}

	l := Link{Element: "a", Href: "https://example.org/a#x"}
	l.SetTarget("https://example.org/a", true)
	if k, ok, known := l.Target(); !known || !ok || k != "https://example.org/a" {
		t.Fatalf("Target() = %q, %v, %v", k, ok, known)
	}
	c := l // a copy carries it
	if k, _, known := c.Target(); !known || k != "https://example.org/a" {
		t.Fatalf("copy: Target() = %q, _, %v", k, known)
	}
	// The same href in another string is the same href.
	c.Href = string([]byte("https://example.org/a#x"))
	if _, _, known := c.Target(); !known {
		t.Fatal("an equal Href in another string lost the target")
	}
	// Another href (redacted, rewritten): the key is not its key.
	l.Href = "https://example.org/b"
	if k, _, known := l.Target(); known {
		t.Fatalf("after the Href changed: Target() = %q, known", k)
	}
	l.SetTarget("https://example.org/b", true)
	if k, _, known := l.Target(); !known || k != "https://example.org/b" {
		t.Fatalf("set again: Target() = %q, _, %v", k, known)
	}

	// Never encoded: a Link read from JSON computes its own.
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	var back Link
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Href != l.Href {
		t.Fatalf("JSON round trip: Href %q", back.Href)
	}
	if _, _, known := back.Target(); known {
		t.Fatalf("the target key crossed JSON: %s", b)
	}
}
