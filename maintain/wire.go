package maintain

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Methods of the draft (section 11).
const (
	MethodLink    = "LINK"
	MethodUnlink  = "UNLINK"
	MethodUnlinkR = "UNLINKR"
	MethodLinkMod = "LINKMOD"
)

// Limits on what a notification may hold.
const (
	// MaxURLLen is the longest URL accepted (bytes).
	MaxURLLen = 2048
	// MaxLineLen is the longest draft request line accepted, line break
	// included: three URLs, a method and separators.
	MaxLineLen = 3*MaxURLLen + 64
	// MaxHeaderLen bounds the header fields after a draft request line.
	MaxHeaderLen = 8 << 10
)

// Status codes of the draft (section 11) with its reason phrases.
const (
	StatusOK             = 200
	StatusNoLinkmod      = 207
	StatusBadRequest     = 400
	StatusNotFound       = 404
	StatusInvalidSource  = 416
	StatusInvalidTarget  = 417
	StatusInternalError  = 500
	StatusTooManyRequest = 429 // HTTP/1.1: per-client rate limit
	StatusUnavailable    = 503 // HTTP/1.1: shutting down or overloaded
)

// Reason returns the draft's reason phrase of a status (HTTP's for the
// statuses the draft does not name).
func Reason(status int) string {
	switch status {
	case StatusOK:
		return "Ok"
	case StatusNoLinkmod:
		return "No Linkmod"
	case StatusBadRequest:
		return "Bad Request"
	case StatusNotFound:
		return "Not found"
	case StatusInvalidSource:
		return "Invalid source URI"
	case StatusInvalidTarget:
		return "Invalid target URI"
	case StatusTooManyRequest:
		return "Too Many Requests"
	}
	if t := http.StatusText(status); t != "" {
		return t
	}
	return "Status " + strconv.Itoa(status)
}

// Request is one link-maintenance call, whatever its framing.
type Request struct {
	Method string
	Source string // Source-URL
	Target string // Target-URL
	// Repl is the third URL: Repl-Source-URL for UNLINK, Repl-Target-URL
	// for UNLINKR; "" when none.
	Repl string
	// LinkMod is set for "LINK Source-URL Target-URL LINKMOD".
	LinkMod bool
}

// String returns the request in the draft's framing.
func (r Request) String() string {
	s := r.Method + " " + r.Source + " " + r.Target
	switch {
	case r.LinkMod:
		s += " LINKMOD"
	case r.Repl != "":
		s += " " + r.Repl
	}
	return s
}

// ErrSyntax is wrapped by ParseRequestLine for a line that is not a draft
// request line (wrong method, number of tokens, characters).
var ErrSyntax = errors.New("malformed request line")

// IsDraftMethod reports whether m is one of the draft's four methods.
func IsDraftMethod(m string) bool {
	switch m {
	case MethodLink, MethodUnlink, MethodUnlinkR, MethodLinkMod:
		return true
	}
	return false
}

// IsDraftLine reports whether a request line (without its line break) is
// in the draft's framing: a draft method not followed by an HTTP version
// as its last token. "UNLINKR http://a/ HTTP/1.1" is the HTTP/1.1 framing.
func IsDraftLine(line []byte) bool {
	f := bytes.Fields(line)
	if len(f) == 0 || !IsDraftMethod(string(f[0])) {
		return false
	}
	return !bytes.HasPrefix(f[len(f)-1], []byte("HTTP/"))
}

// ParseRequestLine parses one draft request line (without its line
// break): a method and two or three tokens separated by any amount of
// white space (section 11: "any amount of whitespace is identical to a
// single token separator"). The URLs are returned as sent; ValidateURL
// judges them. LINK's third token must be LINKMOD (any case); LINKMOD
// takes exactly two URLs. Errors wrap ErrSyntax.
func ParseRequestLine(line string) (Request, error) {
	if len(line) > MaxLineLen {
		return Request{}, fmt.Errorf("%w: longer than %d bytes", ErrSyntax, MaxLineLen)
	}
	if !utf8.ValidString(line) {
		return Request{}, fmt.Errorf("%w: not UTF-8", ErrSyntax)
	}
	for _, c := range line {
		if c < 0x20 && c != '\t' || c == 0x7f {
			return Request{}, fmt.Errorf("%w: control character %U", ErrSyntax, c)
		}
	}
	f := strings.Fields(line)
	if len(f) == 0 {
		return Request{}, fmt.Errorf("%w: empty", ErrSyntax)
	}
	r := Request{Method: f[0]}
	if !IsDraftMethod(r.Method) {
		return Request{}, fmt.Errorf("%w: unknown method", ErrSyntax)
	}
	if len(f) < 3 || len(f) > 4 {
		return Request{}, fmt.Errorf("%w: %s takes a source URL, a target URL and at most one more token", ErrSyntax, r.Method)
	}
	r.Source, r.Target = f[1], f[2]
	if len(f) == 4 {
		switch r.Method {
		case MethodLink:
			if !strings.EqualFold(f[3], "LINKMOD") {
				return Request{}, fmt.Errorf("%w: LINK's third token must be LINKMOD", ErrSyntax)
			}
			r.LinkMod = true
		case MethodLinkMod:
			return Request{}, fmt.Errorf("%w: LINKMOD takes two URLs", ErrSyntax)
		default:
			r.Repl = f[3]
		}
	}
	return r, nil
}

// URLError says why a URL of a notification was refused.
type URLError struct {
	Field  string // "source", "target", "replacement"
	URL    string
	Reason string
}

func (e *URLError) Error() string {
	return fmt.Sprintf("invalid %s URL %q: %s", e.Field, truncate(e.URL, 200), e.Reason)
}

// ValidateURL checks a URL of a notification before anything is done with
// it: at most MaxURLLen bytes of printable ASCII (an IRI must be
// percent-encoded, so no bidirectional or C1 control can hide in it),
// absolute http or https with a host, no user information, no white space
// or backslash, a port (when given)
// that is a number. It returns the URL as parsed. Whether its address may
// be fetched is decided at connect time by the SSRF guard.
func ValidateURL(field, raw string) (*url.URL, error) {
	bad := func(reason string) (*url.URL, error) {
		return nil, &URLError{Field: field, URL: raw, Reason: reason}
	}
	if raw == "" {
		return bad("empty")
	}
	if len(raw) > MaxURLLen {
		return bad(fmt.Sprintf("longer than %d bytes", MaxURLLen))
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= 0x20 || c >= 0x7f || c == '\\' {
			return bad("white space, control character, backslash or non-ASCII byte (percent-encode it)")
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return bad("does not parse")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return bad("scheme is not http or https")
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return bad("no host")
	}
	if u.User != nil {
		return bad("user information in the URL")
	}
	if p := u.Port(); p != "" {
		for _, c := range p {
			if c < '0' || c > '9' {
				return bad("port is not a number")
			}
		}
	}
	return u, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Printable returns s safe to print on a terminal or in a log line: each
// control character (escape sequences, line breaks) and invalid byte is
// written as \xNN, and s is bounded to 2000 bytes.
func Printable(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 || r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' || (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') {
			for j := 0; j < size; j++ {
				fmt.Fprintf(&b, "\\x%02x", s[i+j])
			}
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
		if b.Len() > 2000 {
			return truncate(b.String(), 2000)
		}
	}
	return b.String()
}
