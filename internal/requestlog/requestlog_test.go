package requestlog

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestServer: targets are recorded as sent, including those net/http's
// server rejects, and the response is the one Respond gives.
func TestServer(t *testing.T) {
	s := New(t, func(target string) Response {
		if target == "/page" {
			return Response{ContentType: "text/html", Body: "<p>hi"}
		}
		return Response{Status: 404, Body: "no " + target}
	})
	for _, target := range []string{"/a%zz/b%?q=%", "/page", "http://h//x|y"} {
		c, err := net.Dial("tcp", s.Host())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, s.Host())
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		c.Close()
		if target == "/page" && (resp.StatusCode != 200 || string(body) != "<p>hi" || resp.Header.Get("Content-Type") != "text/html") {
			t.Errorf("/page: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		if target != "/page" && (resp.StatusCode != 404 || string(body) != "no "+target) {
			t.Errorf("%s: %d %q", target, resp.StatusCode, body)
		}
	}
	if got := strings.Join(s.Take(), " "); got != "/a%zz/b%?q=% /page http://h//x|y" {
		t.Errorf("targets %q", got)
	}
	if got := s.Take(); len(got) != 0 {
		t.Errorf("Take again: %q", got)
	}
	c, err := net.Dial("tcp", s.Host())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(c, "GARBAGE\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	c.Close()
	if err != nil || resp.StatusCode != 400 {
		t.Errorf("a malformed request line: %v %v", resp, err)
	}
	if got := s.Take(); len(got) != 0 {
		t.Errorf("a malformed request line was recorded: %q", got)
	}
}
