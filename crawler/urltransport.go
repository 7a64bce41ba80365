package crawler

import (
	"encoding/base64"
	"net/http"

	"github.com/linkrot/linkrot/audit"
)

// urlTransport is the crawler's outermost transport. It makes what goes
// through colly's http.Client agree with linkrot's one URL parser:
//
//   - A URL's userinfo is never sent. net/http's Client turns a URL
//     password into an "Authorization: Basic" header before the transport
//     sees the request (for redirects too); this drops that header and the
//     userinfo. An Authorization header set otherwise (a host rule's
//     headers, the documented way to audit a site behind HTTP
//     authentication) is kept. linkrot records URL passwords as "***" and
//     never uses them.
//   - A redirect's Location is resolved by the WHATWG URL parser
//     (audit.Resolver) and handed to the Client as its absolute
//     serialisation, so the crawler follows "/fi<TAB>nal" or "\final" as a
//     browser (and linkrot's checker) would, instead of net/url failing or
//     reading it differently. A Location that does not parse is left as
//     sent.
type urlTransport struct{ next http.RoundTripper }

func (t urlTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL != nil && req.URL.User != nil {
		r := req.Clone(req.Context())
		pass, _ := req.URL.User.Password()
		basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(req.URL.User.Username()+":"+pass))
		if r.Header.Get("Authorization") == basic {
			r.Header.Del("Authorization")
		}
		r.URL.User = nil
		req = r
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.StatusCode < 300 || resp.StatusCode > 399 {
		return resp, err
	}
	if loc := resp.Header.Get("Location"); loc != "" {
		if res, rerr := audit.NewResolver(req.URL.String()); rerr == nil {
			if u, _, perr := res.Resolve(loc); perr == nil {
				resp.Header.Set("Location", audit.RedactText(u.String()))
			}
		}
	}
	return resp, nil
}
