package linkrot

import "testing"

func TestParseAge(t *testing.T) {
	for in, want := range map[string]string{"90d": "2160h0m0s", "2w": "336h0m0s", "36h": "36h0m0s", "1.5d": "36h0m0s"} {
		d, err := ParseAge(in)
		if err != nil || d.String() != want {
			t.Errorf("ParseAge(%q) = %v, %v; want %s", in, d, err, want)
		}
	}
	for _, in := range []string{"", "d", "-3d", "0", "soon"} {
		if _, err := ParseAge(in); err == nil {
			t.Errorf("ParseAge(%q) succeeded", in)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"5MiB": 5 << 20, "1kb": 1000, " 2 G": 2 << 30, "0": 0, "123": 123, "3K": 3 << 10} {
		if n, err := ParseSize(in); err != nil || n != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, n, err, want)
		}
	}
	for _, in := range []string{"", "-1", "MiB", "1.5MiB", "lots"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) succeeded", in)
		}
	}
}
