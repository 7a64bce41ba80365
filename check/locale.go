package check

import "strings"

// iso6391 lists the 184 two-letter language codes of ISO 639-1 (with bh,
// Bihari, withdrawn in 2021 but still in use on the web).
const iso6391 = "aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs " +
	"ca ce ch co cr cs cu cv cy da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy " +
	"ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik io is it iu ja jv " +
	"ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi " +
	"mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps " +
	"pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw ta te " +
	"tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu"

var languageCodes = func() map[string]bool {
	m := map[string]bool{}
	for c := range strings.FieldsSeq(iso6391) {
		m[c] = true
	}
	return m
}()

// isLocale reports whether s is a language path segment: an ISO 639-1
// code ("en", "de"), optionally with one subtag after "-" or "_": a region
// ("en-US", "pt_BR"), a UN M.49 area ("es-419") or a script ("zh_Hans").
// Two letters that are no language ("/go", "/ok", "/tv", "/ai") are not
// a locale: a redirect to them is not a redirect to a home page.
func isLocale(s string) bool {
	lang, sub, hasSub := strings.Cut(s, "-")
	if !hasSub {
		lang, sub, hasSub = strings.Cut(s, "_")
	}
	if !languageCodes[strings.ToLower(lang)] {
		return false
	}
	if !hasSub {
		return true
	}
	switch {
	case len(sub) == 2 && isASCIILetters(sub): // ISO 3166-1 region
	case len(sub) == 3 && isASCIIDigits(sub): // UN M.49 area
	case len(sub) == 4 && isASCIILetters(sub): // ISO 15924 script
	default:
		return false
	}
	return true
}

func isASCIILetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

func isASCIIDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
