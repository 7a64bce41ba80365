package crawler

import (
	"encoding/base64"
	"net/http"
)

// noURLCredentials is the crawler's outermost transport: a URL's userinfo
// is never sent. net/http's Client turns a URL password into an
// "Authorization: Basic" header before the transport sees the request
// (colly uses a Client, for redirects too); this drops that header and the
// userinfo. An Authorization header set otherwise (a host rule's headers,
// the documented way to audit a site behind HTTP authentication) is kept.
// linkrot records URL passwords as "***" and never uses them.
type noURLCredentials struct{ next http.RoundTripper }

func (t noURLCredentials) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil || req.URL.User == nil {
		return t.next.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	pass, _ := req.URL.User.Password()
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(req.URL.User.Username()+":"+pass))
	if r.Header.Get("Authorization") == basic {
		r.Header.Del("Authorization")
	}
	r.URL.User = nil
	return t.next.RoundTrip(r)
}
