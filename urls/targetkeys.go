package urls

import (
	"net/url"
	"strings"
)

// TargetKeys is TargetKey for the links of one page, each href parsed
// once: a page links to the same few targets many times, mostly through
// different fragments (the python3.11 documentation: 330 links a page
// to 58 targets), and parsing an href is most of what its key costs.
//
// Key(href) always returns what TargetKey(href) returns, and NetURL(href)
// what ParseURL(href) and its NetURL do. hrefs that differ only in their
// fragment share one entry when that cannot change the result (see
// CutFragment). The zero value is ready to use; a TargetKeys is not safe for
// concurrent use.
type TargetKeys struct {
	m map[string]*targetKeyResult
}

type targetKeyResult struct {
	key string
	u   URL // without fragment when ok
	ok  bool
	net *url.URL // u.NetURL(), once asked for
}

// entry returns the entry of href, parsing it if there is none.
func (t *TargetKeys) entry(href string) *targetKeyResult {
	k := CutFragment(href)
	if r, hit := t.m[k]; hit {
		return r
	}
	key, u, ok := TargetKey(k)
	r := &targetKeyResult{key: key, u: u.WithoutFragment(), ok: ok}
	if t.m == nil {
		t.m = make(map[string]*targetKeyResult)
	}
	t.m[k] = r
	return r
}

// Key returns TargetKey(href)'s key and ok.
func (t *TargetKeys) Key(href string) (key string, ok bool) {
	r := t.entry(href)
	return r.key, r.ok
}

// NetURL returns ParseURL(href)'s NetURL (which has no fragment), or its
// error: a new *url.URL at each call, which the caller may change.
func (t *TargetKeys) NetURL(href string) (*url.URL, error) {
	r := t.entry(href)
	if !r.ok {
		// TargetKey's ok is ParseURL's success: a blank href has no
		// scheme either.
		if _, err := ParseURL(href); err != nil {
			return nil, err
		}
		return nil, &invalidURLError{Reason: "blank URL"} // not reached
	}
	if r.net == nil {
		r.net = r.u.NetURL()
	}
	c := *r.net
	return &c, nil
}

// CutFragment returns href cut at its first "#" where that cannot change
// how href parses (TargetKey's key and ParseURL's URL without fragment are
// the same for both), else href: what TargetKeys computes href's key from,
// and what the crawler knows a page's repeated links by.
//
// The URL parser reads the first "#" of its input as the start of the
// fragment in every state, acting before it as it does at the end of the
// input, and nothing in the fragment makes a URL invalid; the key is the
// serialisation without the fragment. What differs between href and the
// cut is what happens to the input as a whole, and the cut is taken only
// when none of it can apply:
//   - the parser trims C0 controls and spaces from the end of its input
//     (and removes tabs and newlines): the byte before the "#" must be
//     printable ASCII, so the cut ends where href's part before the "#"
//     did;
//   - TargetKey's blank test: the cut then holds a printable byte;
//   - the limits of tooCostly, which look at the length of the whole
//     input once it is 512 bytes or more: href must be shorter.
//
// FuzzTargetKeys holds TargetKey(CutFragment(s)) to TargetKey(s).
func CutFragment(href string) string {
	i := strings.IndexByte(href, '#')
	if i <= 0 || len(href) >= 512 {
		return href
	}
	if c := href[i-1]; c <= ' ' || c >= 0x7f {
		return href
	}
	return href[:i]
}
