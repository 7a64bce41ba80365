package crawler

import (
	"encoding/base64"
	"net/http"

	"github.com/linkrot/linkrot/urls"
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
//     (urls.Resolver) and handed to the Client as its absolute
//     serialisation, so the crawler follows "/fi<TAB>nal" or "\final" as a
//     browser (and linkrot's checker) would, instead of net/url failing or
//     reading it differently. A Location that does not parse is left as
//     sent.
//   - A URL that net/url cannot carry ("/a%zz": urls.URL.NetURL holds it
//     in Opaque) reaches Colly as a stand-in it can carry (schedule), with
//     the URL itself in headerTarget: the request is sent to the URL's
//     request target, exactly as a browser sends it, and the response's
//     Request names the URL itself, so that the page is recorded under
//     it. headerTarget is never sent.
type urlTransport struct{ next http.RoundTripper }

// headerTarget carries, from schedule to urlTransport, the URL a
// stand-in request is for.
const headerTarget = "X-Linkrot-Target"

func (t urlTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var target *urls.URL
	if v := req.Header.Get(headerTarget); v != "" {
		r := req.Clone(req.Context())
		r.Header.Del(headerTarget)
		// Only the request Colly made from the stand-in: net/http copies
		// the field onto the requests of redirects (Response set).
		if p, err := urls.ParseURL(v); err == nil && req.Response == nil && p.Scheme() == req.URL.Scheme && p.Host() == req.URL.Host {
			r.URL = p.RequestURL()
			target = &p
		}
		req = r
	}
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
	base := req.URL.String()
	resp, err := t.next.RoundTrip(req)
	if target != nil && resp != nil {
		r := *req
		r.URL = target.NetURL()
		resp.Request = &r
		base = target.Unfragmented()
	}
	if err != nil || resp.StatusCode < 300 || resp.StatusCode > 399 {
		return resp, err
	}
	if loc := resp.Header.Get("Location"); loc != "" {
		if res, rerr := urls.NewResolver(base); rerr == nil {
			if u, _, perr := res.Resolve(loc); perr == nil {
				resp.Header.Set("Location", urls.RedactText(u.String()))
			}
		}
	}
	return resp, nil
}
