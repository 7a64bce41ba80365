package urls

import (
	"fmt"
	"log/slog"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// Redaction of URL passwords.
//
// A password in a URL's userinfo (https://user:s3cr3t@host/) is a secret
// that a page published by mistake. linkrot never stores, prints or sends
// it:
//   - NormalizeURL writes it as "***", so targets, findings and every
//     output built from them carry "user:***@";
//   - the extractor passes everything it returns through RedactStrings
//     (raw attribute values, diagnostics quoting them, anchor text);
//   - the store passes pages and checks through RedactStrings before
//     writing (redirect hops, page URLs from the crawler, evidence text),
//     and the report writers redact what they print once more;
//   - the checker never turns URL userinfo into an Authorization header
//     (it calls the transport directly, and strips userinfo before a
//     request: stripUserinfo). A site behind HTTP authentication is
//     audited with a host rule's headers instead.
//
// The user name is kept (user:***@), as the report needs to show which
// account a link names.

// RedactedPassword replaces a URL password.
const RedactedPassword = "***"

// redactURL returns u with its password replaced by RedactedPassword (u
// itself when it has none). net/url serialises the result as
// "user:%2A%2A%2A@"; use RedactText on a string.
func redactURL(u *url.URL) *url.URL {
	if u == nil || u.User == nil {
		return u
	}
	if p, ok := u.User.Password(); !ok || p == RedactedPassword {
		return u
	}
	c := *u
	c.User = url.UserPassword(u.User.Username(), RedactedPassword)
	return &c
}

// stripUserinfo returns u without userinfo (u itself when it has none):
// the URL a request is sent to.
func stripUserinfo(u *url.URL) *url.URL {
	if u == nil || u.User == nil {
		return u
	}
	c := *u
	c.User = nil
	return &c
}

// redactHref redacts the password of a WHATWG serialisation.
func redactHref(href string) string { return RedactText(href) }

// specialSchemes are the WHATWG special schemes: after them, "\" ends the
// authority like "/", and "https:u:p@h" (no slashes) has userinfo.
var specialSchemes = []string{"https:", "http:", "wss:", "ws:", "ftp:", "file:"}

// RedactText replaces with RedactedPassword every URL password in s: the
// text between the first ":" and the last "@" of an authority, where an
// authority follows "//" (or "\\", or a special scheme's ":" and any
// slashes) and ends at "/", "?", "#", white space (but tab, line feed and
// carriage return, which the URL parser removes) or, after a special
// scheme, "\". It works on any text (raw attribute values, messages, page
// text), errs on the side of redacting, and is idempotent.
func RedactText(s string) string {
	return redact(s, true)
}

// RedactURLString is RedactText for a string that is one URL as written
// (an href, a <base href>, a data-originalurl value): a space does not end
// its authority there, since the URL parser percent-encodes it
// ("https://u:p w@h/" has the password "p w").
func RedactURLString(s string) string {
	return redact(s, false)
}

func redact(s string, spaceEnds bool) string {
	if strings.IndexByte(s, '@') < 0 {
		return s
	}
	type span struct{ start, end int }
	var spans []span
	consider := func(start int, special bool) {
		at := -1
		i := start
	scan:
		for ; i < len(s); i++ {
			switch c := s[i]; c {
			case '/', '?', '#':
				break scan
			case ' ', '\f', '\v':
				if spaceEnds {
					break scan
				}
			case '\\':
				if special {
					break scan
				}
			case '@':
				at = i
			}
		}
		if at < 0 {
			return
		}
		colon := strings.IndexByte(s[start:at], ':')
		if colon < 0 {
			return
		}
		p := span{start + colon + 1, at}
		if p.start == p.end || s[p.start:p.end] == RedactedPassword {
			return
		}
		spans = append(spans, p)
	}
	lower := strings.ToLower(s)
	for i := 0; i+1 < len(s); i++ {
		if isSlash(s[i]) && isSlash(s[i+1]) && (i == 0 || !isSlash(s[i-1])) {
			j := i
			for j < len(s) && (isSlash(s[j]) || isTabOrNewline(s[j])) {
				j++
			}
			consider(j, afterSpecialScheme(lower[:i]))
			i = j - 1
		}
	}
	for _, sc := range specialSchemes {
		for off := 0; ; {
			k := strings.Index(lower[off:], sc)
			if k < 0 {
				break
			}
			j := off + k + len(sc)
			off = j
			for j < len(s) && (isSlash(s[j]) || isTabOrNewline(s[j])) {
				j++
			}
			consider(j, true)
		}
	}
	if len(spans) == 0 {
		return s
	}
	sort.Slice(spans, func(a, b int) bool { return spans[a].start < spans[b].start })
	var b strings.Builder
	last := 0
	for _, p := range spans {
		if p.start < last {
			continue
		}
		b.WriteString(s[last:p.start])
		b.WriteString(RedactedPassword)
		last = p.end
	}
	b.WriteString(s[last:])
	return b.String()
}

func isSlash(c byte) bool        { return c == '/' || c == '\\' }
func isTabOrNewline(c byte) bool { return c == '\t' || c == '\n' || c == '\r' }

// afterSpecialScheme reports whether prefix ends with a special scheme.
func afterSpecialScheme(lowerPrefix string) bool {
	for _, sc := range specialSchemes {
		if strings.HasSuffix(lowerPrefix, sc) {
			return true
		}
	}
	return false
}

// RedactStrings applies RedactText to every string reachable from v
// through pointers, structs (exported fields), slices, arrays, interfaces
// and map values, in place. v must be a pointer. It is the defensive pass
// of the store and the report writers over values that came from the web.
func RedactStrings(v any) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return
	}
	redactValue(rv.Elem(), 0)
}

func redactValue(v reflect.Value, depth int) {
	if depth > 32 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			if s := v.String(); strings.IndexByte(s, '@') >= 0 {
				if r := RedactText(s); r != s {
					v.SetString(r)
				}
			}
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			e := v.Elem()
			if v.Kind() == reflect.Interface {
				// Values inside interfaces are not settable: redact a
				// copy and put it back.
				if e.Kind() == reflect.String && v.CanSet() {
					if r := RedactText(e.String()); r != e.String() {
						v.Set(reflect.ValueOf(r).Convert(e.Type()))
					}
					return
				}
			}
			redactValue(e, depth+1)
		}
	case reflect.Struct:
		for _, i := range stringFields(v.Type()) {
			redactValue(v.Field(i), depth+1)
		}
	case reflect.Slice, reflect.Array:
		if !holdsStrings(v.Type().Elem()) {
			return
		}
		for i := 0; i < v.Len(); i++ {
			redactValue(v.Index(i), depth+1)
		}
	case reflect.Map:
		if v.IsNil() || !holdsStrings(v.Type().Elem()) {
			return
		}
		if m, ok := mapOfStrings(v); ok {
			// Headers and the like, without reflection: replace only
			// the values that change.
			for k, s := range m {
				if strings.IndexByte(s, '@') >= 0 {
					if r := RedactText(s); r != s {
						m[k] = r
					}
				}
			}
			return
		}
		iter := v.MapRange()
		for iter.Next() {
			val := iter.Value()
			c := reflect.New(val.Type()).Elem()
			c.Set(val)
			redactValue(c, depth+1)
			v.SetMapIndex(iter.Key(), c)
		}
	}
}

// stringFieldsOf caches stringFields by struct type.
var stringFieldsOf sync.Map // reflect.Type -> []int

// stringFields returns the indexes of the exported fields of the struct
// type t that can hold a string redactValue reaches: it skips numbers,
// booleans, times and the like, and does not ask reflect for each field's
// StructField again for every value.
func stringFields(t reflect.Type) []int {
	if f, ok := stringFieldsOf.Load(t); ok {
		return f.([]int)
	}
	var idx []int
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.IsExported() && holdsStrings(f.Type) {
			idx = append(idx, i)
		}
	}
	stringFieldsOf.Store(t, idx)
	return idx
}

// holdsStringsOf caches holdsStrings by type.
var holdsStringsOf sync.Map // reflect.Type -> bool

// holdsStrings reports whether a value of type t can hold a string that
// redactValue reaches (an interface can hold anything).
func holdsStrings(t reflect.Type) bool {
	if h, ok := holdsStringsOf.Load(t); ok {
		return h.(bool)
	}
	h := reachesString(t, map[reflect.Type]bool{})
	holdsStringsOf.Store(t, h)
	return h
}

// reachesString is holdsStrings without the cache; seen holds the types
// being looked at, so that a recursive type ends (a cycle adds no string
// that another path does not reach).
func reachesString(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	defer delete(seen, t)
	switch t.Kind() {
	case reflect.String, reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return reachesString(t.Elem(), seen)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if f := t.Field(i); f.IsExported() && reachesString(f.Type, seen) {
				return true
			}
		}
	}
	return false
}

// RedactLogAttr is a slog.HandlerOptions.ReplaceAttr function that redacts
// URL passwords in string values, errors and fmt.Stringer values (such as
// *url.URL) of log records, the message included.
func RedactLogAttr(_ []string, a slog.Attr) slog.Attr {
	switch a.Value.Kind() {
	case slog.KindString:
		if s := a.Value.String(); strings.IndexByte(s, '@') >= 0 {
			a.Value = slog.StringValue(RedactText(s))
		}
	case slog.KindAny:
		var s string
		switch v := a.Value.Any().(type) {
		case *url.URL:
			if v != nil {
				s = RedactText(v.String())
			}
		case error:
			s = v.Error()
		case fmt.Stringer:
			s = v.String()
		default:
			return a
		}
		if strings.IndexByte(s, '@') >= 0 {
			if r := RedactText(s); r != s {
				a.Value = slog.StringValue(r)
			}
		}
	}
	return a
}

// mapOfStrings returns the map v holds when it is a map[string]string
// that may be read as such.
func mapOfStrings(v reflect.Value) (map[string]string, bool) {
	if !v.CanInterface() {
		return nil, false
	}
	m, ok := v.Interface().(map[string]string)
	return m, ok
}
