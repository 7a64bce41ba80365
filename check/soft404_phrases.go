package check

import (
	"strings"
	"sync"
	"unicode"

	"github.com/linkrot/linkrot/drift/textsim"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// The phrase tables of the soft-404 classifier's "words" signal and of the
// parked-domain signal. Every phrase and every text is compared as a
// sequence of normalised tokens (phraseTokens): textsim.Words (lower case;
// maximal runs of letters and digits; every Han, Hiragana and Katakana
// character a token of its own, since Chinese and Japanese are written
// without spaces), then each token folded to its letters without
// diacritics (Unicode NFKD, combining marks removed: "página" and
// "pagina", "nicht verfügbar" and "nicht verfugbar", "ё" and "е" compare
// equal; full-width and half-width forms fold to their plain ones). A
// phrase matches a run of whole tokens, so "not found" does not match in
// "notfoundation", and an apostrophe separates tokens alike on both sides
// ("can't" is "can t"). For Chinese and Japanese a phrase is a run of
// characters anywhere, which is what a word boundary can be there.
//
// The phrases were collected from the not-found pages of common software
// and large sites, in each language (examples in the comments), and from
// the wording the studies of soft 404s quote (Bar-Yossef et al. 2004,
// Meneses et al. 2012: "page not found", "no longer available", "does not
// exist"). Strong phrases say that the page asked for is missing. Weak ones
// ("404", "error 404" is strong) say it only when they are all there is
// (a title "404"). Filler words are the words not-found titles and
// headings wrap their phrase in ("Oops!", "Sorry,", "Error", "page", the
// site's name is a separate title segment): a title or heading whose
// every token is a phrase or a filler, with at least one phrase, IS a
// not-found statement; one that merely contains a phrase ("Handling 404
// errors in Django") is not.

// notFoundStrong are strong not-found phrases, by language.
var notFoundStrong = map[string][]string{
	// Apache "Not Found / The requested URL was not found on this server",
	// nginx "404 Not Found", WordPress "Oops! That page can't be found.",
	// GitHub Pages "404 File not found", Google "The requested URL ...
	// was not found", Medium "Page not found", Blogger "Sorry, the page
	// you were looking for in this blog does not exist."
	"en": {
		"not found", "page not found", "404 not found", "file not found", "was not found",
		"could not be found", "cannot be found", "can not be found", "can't be found",
		"couldn't be found", "could not find", "couldn't find", "can't find", "cannot find",
		"does not exist", "doesn't exist", "no longer exists", "no longer exist",
		"no longer available", "not available anymore", "page removed", "page has been removed",
		"page was removed", "page has been deleted", "page was deleted", "page is missing",
		"page you requested", "page you are looking for", "page you were looking for",
		"page you're looking for", "page you tried to access", "page isn't available",
		"page is not available", "page is no longer", "error 404", "404 error", "404 page",
		"http 404", "nothing was found", "nothing found",
	},
	// "Seite nicht gefunden", "Die angeforderte Seite existiert nicht",
	// "Diese Seite ist leider nicht (mehr) verfügbar" (Spiegel, Zeit).
	"de": {
		"seite nicht gefunden", "nicht gefunden", "wurde nicht gefunden", "konnte nicht gefunden werden",
		"existiert nicht", "existiert nicht mehr", "nicht mehr verfügbar", "nicht verfügbar",
		"fehler 404", "404 fehler", "angeforderte seite", "gesuchte seite", "seite wurde entfernt",
		"seite wurde gelöscht", "nicht mehr vorhanden", "gibt es nicht",
	},
	// "Page introuvable", "La page que vous recherchez n'existe pas",
	// "Cette page n'est plus disponible" (Le Monde, service-public.fr).
	"fr": {
		"page introuvable", "introuvable", "page non trouvée", "non trouvée", "non trouvé",
		"n'existe pas", "n'existe plus", "n'est plus disponible", "n'est pas disponible",
		"erreur 404", "page demandée", "page que vous recherchez", "page que vous cherchez",
		"page a été supprimée", "page inexistante", "pas été trouvée",
	},
	// "Página no encontrada", "La página que buscas no existe",
	// "Esta página ya no está disponible" (El País, gob.es).
	"es": {
		"página no encontrada", "no encontrada", "no encontrado", "no existe", "ya no existe",
		"ya no está disponible", "no está disponible", "error 404", "página que buscas",
		"página que estás buscando", "página solicitada", "no se ha encontrado", "no se encontró",
		"página eliminada", "ha sido eliminada",
	},
	// "Pagina non trovata", "La pagina che stai cercando non esiste"
	// (Corriere, Repubblica).
	"it": {
		"pagina non trovata", "non trovata", "non trovato", "non esiste", "non esiste più",
		"non è più disponibile", "non è disponibile", "errore 404", "pagina richiesta",
		"pagina che stai cercando", "pagina che cerchi", "pagina rimossa", "è stata rimossa",
	},
	// "Pagina niet gevonden", "Deze pagina bestaat niet (meer)" (NOS,
	// rijksoverheid.nl).
	"nl": {
		"pagina niet gevonden", "niet gevonden", "bestaat niet", "bestaat niet meer",
		"niet meer beschikbaar", "niet beschikbaar", "fout 404", "pagina die u zoekt",
		"pagina die je zoekt", "pagina is verwijderd", "is verwijderd",
	},
	// "Página não encontrada", "A página que você procura não existe"
	// (Globo, gov.br, Público).
	"pt": {
		"página não encontrada", "não encontrada", "não encontrado", "não existe", "não existe mais",
		"não está mais disponível", "já não está disponível", "não está disponível", "erro 404",
		"página que procura", "página que você procura", "página que você está procurando",
		"página solicitada", "página removida", "foi removida",
	},
	// "Страница не найдена", "Такой страницы не существует", "Запрашиваемая
	// страница не найдена" (Яндекс, Лента, 1С-Битрикс).
	"ru": {
		"страница не найдена", "не найдена", "не найдено", "не найден", "не существует",
		"больше не существует", "больше не доступна", "недоступна", "ошибка 404", "404 ошибка",
		"запрашиваемая страница", "страница удалена", "страница была удалена", "была удалена",
	},
	// "ページが見つかりません", "お探しのページは見つかりませんでした",
	// "このページは存在しません", "ページは削除されました" (Yahoo! JAPAN,
	// NHK, 楽天).
	"ja": {
		"ページが見つかりません", "見つかりません", "見つかりませんでした", "存在しません",
		"存在しませんでした", "お探しのページ", "指定されたページ", "ご指定のページ",
		"削除されました", "公開を終了", "404エラー", "エラー404", "ページは削除",
	},
	// Simplified and traditional: "页面不存在", "抱歉，您访问的页面不存在",
	// "找不到页面", "页面未找到", "您要找的頁面不存在", "找不到網頁" (百度,
	// 新浪, 知乎, 中央社).
	"zh": {
		"页面不存在", "頁面不存在", "网页不存在", "網頁不存在", "找不到页面", "找不到頁面",
		"找不到网页", "找不到網頁", "页面未找到", "頁面未找到", "页面找不到", "頁面找不到",
		"您访问的页面", "您訪問的頁面", "您要找的页面", "您要找的頁面", "已被删除", "已被刪除",
		"页面已删除", "頁面已刪除", "404错误", "404錯誤", "错误404", "錯誤404", "未找到", "不存在",
		"已删除", "已刪除",
	},
}

// notFoundWeak count only as all (with fillers) of a title or heading.
var notFoundWeak = []string{"404", "410", "404 404", "not found 404", "error", "fehler", "erreur", "errore", "fout", "erro", "ошибка", "エラー", "错误", "錯誤"}

// notFoundFiller are the words not-found titles and headings wrap their
// phrase in, all languages together.
var notFoundFiller = []string{
	// en
	"sorry", "oops", "whoops", "ooops", "uh", "oh", "ah", "hmm", "error", "page", "the", "this",
	"that", "a", "an", "we", "you", "our", "is", "was", "it", "http", "status", "code", "so",
	"here", "requested", "url", "file", "document", "resource", "content", "article", "post",
	"site", "link", "lost", "found", "looks", "like", "seems", "unfortunately", "hello",
	"there", "s", "t", "m", "be", "has", "have", "been", "or", "and", "may", "might", "moved",
	"on", "server", "for", "of", "to", "in", "at", "not", "no", "longer", "anymore", "exist",
	"exists", "available", "missing", "gone", "removed", "deleted", "find", "could", "can",
	// de
	"fehler", "leider", "seite", "die", "diese", "der", "das", "ups", "hoppla", "es", "tut",
	"uns", "leid", "ist", "wurde", "nicht", "mehr", "gefunden", "sie",
	// fr
	"erreur", "oups", "désolé", "désolée", "désolés", "la", "le", "cette", "cet", "pas",
	"plus", "n", "est", "de", "l", "nous", "sommes",
	// es, it, pt
	"lo", "sentimos", "esta", "página", "ups", "errore", "ops", "spiacenti", "ci", "dispiace",
	"questa", "pagina", "erro", "desculpe", "a", "o", "é", "não", "no", "non", "esiste",
	// nl
	"fout", "oeps", "de", "deze", "helaas", "het",
	// ru
	"ошибка", "упс", "извините", "к", "сожалению", "эта", "страница", "такой", "страницы", "нет",
	// ja (particles and politeness, as characters)
	"申し訳ございません", "申し訳ありません", "エラー", "ページ", "お探しの", "の", "が", "は", "を",
	"に", "で", "も", "こ", "この", "ご", "お",
	// zh
	"抱歉", "对不起", "對不起", "错误", "錯誤", "页面", "頁面", "网页", "網頁", "您", "的", "了",
	"很", "该", "該", "此",
}

// aboutTerms are words of pages about errors rather than of error pages:
// two or more of them at the start of the main text make a page that says
// "404" or "not found" a page ABOUT it (documentation, an HTTP reference),
// which weighs against the words signal (see classifyWords).
var aboutTerms = []string{
	"status code", "response code", "error code", "http status", "status codes", "client error",
	"handler", "handlers", "exception", "exceptions", "raise", "raises", "middleware", "view",
	"views", "template", "templates", "configure", "configuration", "function", "returns",
	"return", "header", "headers", "response", "responses", "request object", "urlconf",
	"statuscode", "api", "redirect", "tutorial", "documentation", "example", "setting", "settings",
	"statuscode", "htaccess", "errordocument", "customize", "custom", "how to",
}

// The parked-domain phrases, by what they say and by language. "{domain}"
// stands for the domain's own name (the target's host without "www.", or
// its registrable domain: domainNames.withOwnName), so that
// "old-trails.com is for sale" is an offer of the page's own domain while
// "example.com is for sale" on a blog about domain sales is not.
//
// saleOffers offer the domain for sale: Sedo "This domain may be for
// sale!", HugeDomains "The domain name is for sale", Dan.com "Buy this
// domain" / "Make an offer", Afternic "This domain is for sale", German
// "Diese Domain steht zum Verkauf", French "Ce nom de domaine est à
// vendre", Spanish "Este dominio está en venta", Japanese
// "このドメインは売り出し中です".
var saleOffers = map[string][]string{
	"en": {
		"this domain may be for sale", "domain may be for sale", "this domain is for sale",
		"domain is for sale", "domain name is for sale", "domain for sale", "buy this domain",
		"get this domain", "make an offer on this domain", "inquire about this domain",
		"domain name is available", "this website is for sale", "this web site is for sale",
		"website is for sale", "make an offer", "submit an offer", "domain is available for purchase",
		"domain name is available for purchase", "{domain} is for sale", "{domain} may be for sale",
		"{domain} might be for sale", "{domain} is available for purchase", "{domain} for sale",
		"buy {domain}", "purchase {domain}", "get {domain}", "make an offer on {domain}",
	},
	"de": {
		"diese domain kaufen", "domain ist zu verkaufen", "diese domain steht zum verkauf",
		"domain steht zum verkauf", "domain kaufen", "domain zu verkaufen", "diese domain kann gekauft werden",
		"angebot abgeben", "machen sie ein angebot", "{domain} steht zum verkauf", "{domain} kaufen",
		"{domain} ist zu verkaufen", "{domain} zu verkaufen",
	},
	"fr": {
		"ce domaine est à vendre", "ce nom de domaine est à vendre", "domaine est à vendre",
		"acheter ce domaine", "domaine à vendre", "ce domaine est en vente", "nom de domaine à vendre",
		"acheter ce nom de domaine", "faire une offre", "{domain} est à vendre", "{domain} est en vente",
		"acheter {domain}",
	},
	"es": {
		"este dominio está en venta", "dominio está en venta", "dominio en venta", "comprar este dominio",
		"este dominio puede estar en venta", "este dominio se vende", "comprar este nombre de dominio",
		"hacer una oferta", "haga una oferta", "{domain} está en venta", "{domain} se vende",
		"{domain} en venta", "comprar {domain}",
	},
	"it": {"questo dominio è in vendita", "dominio è in vendita", "dominio in vendita", "acquista questo dominio"},
	"nl": {"dit domein is te koop", "deze domeinnaam is te koop", "domeinnaam is te koop", "domeinnaam te koop", "domein te koop"},
	"pt": {"este domínio está à venda", "domínio está à venda", "domínio à venda", "comprar este domínio"},
	"ru": {"домен продается", "этот домен продается", "домен продаётся", "купить домен", "домен выставлен на продажу"},
	"ja": {
		"このドメインは売り出し中", "ドメインは売り出し中", "ドメインは販売中", "このドメインを購入", "ドメイン販売",
		"このドメインは購入できます", "{domain}は売り出し中", "{domain}は販売中", "{domain}を購入",
	},
	"zh": {"该域名正在出售", "此域名出售", "域名出售", "域名转让", "购买此域名", "該域名正在出售", "域名出售中"},
}

// registrarNotices are a registrar's notices on a domain whose
// registration lapsed or that serves nothing yet: GoDaddy "expired on
// … and is pending renewal or deletion", Network Solutions "This domain
// name has expired", Namecheap "This domain is registered at Namecheap",
// IONOS "Diese Domain ist bereits vergeben", お名前.com
// "このドメインはお名前.comで取得されています".
var registrarNotices = map[string][]string{
	"en": {
		"this domain has expired", "domain has expired", "this domain name has expired",
		"domain name has expired", "this domain is expired", "domain is expired",
		"pending renewal or deletion", "is pending renewal", "renew this domain",
		"if you are the owner of this domain", "if you own this domain",
		"if you are the registrant of this domain", "this domain is registered at",
		"this domain is registered with", "this domain was recently registered",
		"domain was recently registered", "this domain has been registered", "{domain} has expired",
		"{domain} expired on", "{domain} is registered at", "{domain} is registered with",
		"{domain} has been registered", "{domain} was recently registered",
	},
	"de": {
		"diese domain ist abgelaufen", "domain ist abgelaufen", "diese domain ist bereits vergeben",
		"domain ist bereits vergeben", "diese domain wurde registriert", "{domain} ist abgelaufen",
		"{domain} wurde registriert",
	},
	"fr": {
		"ce domaine a expiré", "ce nom de domaine a expiré", "nom de domaine a expiré", "domaine a expiré",
		"ce nom de domaine est expiré", "ce domaine a été enregistré", "ce nom de domaine a été enregistré",
		"{domain} a expiré", "{domain} a été enregistré",
	},
	"es": {
		"este dominio ha expirado", "dominio ha expirado", "este dominio ha caducado", "dominio ha caducado",
		"este dominio ha sido registrado", "renovar este dominio", "{domain} ha expirado",
		"{domain} ha caducado", "{domain} ha sido registrado",
	},
	"it": {"questo dominio è scaduto", "dominio è scaduto"},
	"nl": {"dit domein is verlopen", "domeinnaam is verlopen"},
	"pt": {"este domínio expirou", "domínio expirou"},
	"ru": {"срок регистрации домена истек", "домен не продлен"},
	"ja": {
		"このドメインは有効期限が切れています", "ドメインの有効期限が切れ", "で取得されています",
		"{domain}は有効期限が切れ",
	},
	"zh": {"该域名已过期", "域名已过期", "該域名已過期", "域名已過期"},
}

// parkingWords are the wording of parking services' landers: GoDaddy
// "This Web page is parked for FREE, courtesy of GoDaddy.com",
// Bodis/ParkingCrew "Related Searches", the classic template's
// "… is your first and best source for all of the information you're
// looking for".
var parkingWords = map[string][]string{
	"en": {
		"this domain is parked", "domain is parked", "parked domain", "parked free", "parked for free",
		"this web page is parked", "this webpage is parked", "courtesy of godaddy", "related searches",
		"sponsored listings", "the domain owner", "is your first and best source for",
		"first and best source for all of the information",
	},
	"de": {"diese domain ist geparkt", "geparkte domain"},
	"fr": {"ce domaine est parqué", "nom de domaine parqué"},
	"es": {"este dominio está aparcado", "dominio aparcado"},
}

// Groups of parked-domain phrases, named as the verdict's reason names
// the lander's kind.
const (
	groupSale      = "for sale"
	groupRegistrar = "registrar notice"
	groupParking   = "parking service"
)

// parkedPhraseTokens are the tokens of a parked-domain phrase, the token
// ownNameToken for each "{domain}".
func parkedPhraseTokens(text string) []string {
	var toks []string
	for i, part := range strings.Split(text, "{domain}") {
		if i > 0 {
			toks = append(toks, ownNameToken)
		}
		toks = append(toks, phraseTokens(part)...)
	}
	return toks
}

// fold removes diacritics: NFKD, combining marks dropped.
var foldPool = sync.Pool{New: func() any {
	return transform.Chain(norm.NFKD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
}}

// foldToken returns a token without diacritics, in compatibility form.
// Plain ASCII tokens are returned as they are.
func foldToken(w string) string {
	ascii := true
	for i := 0; i < len(w); i++ {
		if w[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return w
	}
	t := foldPool.Get().(transform.Transformer)
	defer foldPool.Put(t)
	t.Reset()
	out, _, err := transform.String(t, w)
	if err != nil || out == "" {
		return w
	}
	return strings.ToLower(out)
}

// phraseTokens returns the normalised tokens of a text (see above).
func phraseTokens(s string) []string {
	ws := textsim.Words(foldString(s))
	for i, w := range ws {
		ws[i] = foldToken(w)
	}
	return ws
}

// foldString applies compatibility decomposition before tokenising, so
// that full-width letters and half-width katakana tokenise as their plain
// forms.
func foldString(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return norm.NFKC.String(s)
		}
	}
	return s
}

// foldTokens normalises tokens that textsim.Words made (the stored main
// text of a crawled page).
func foldTokens(ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = foldToken(foldString(w))
	}
	return out
}

// phraseKind is what a phrase says.
type phraseKind uint8

const (
	kindFiller phraseKind = iota
	kindWeak
	kindStrong
	kindAbout
	kindParked
)

// phrase is one entry of a phraseSet.
type phrase struct {
	text   string
	tokens []string
	kind   phraseKind
	lang   string
	group  string // of a parked-domain phrase: groupSale ...
}

// phraseSet finds phrases in token sequences: phrases indexed by their
// first token, the longest tried first.
type phraseSet struct {
	byFirst map[string][]*phrase
}

func (ps *phraseSet) add(text string, kind phraseKind, lang string) {
	ps.addTokens(&phrase{text: text, tokens: phraseTokens(text), kind: kind, lang: lang})
}

// addTokens adds p, its tokens already made.
func (ps *phraseSet) addTokens(p *phrase) {
	toks, kind := p.tokens, p.kind
	if len(toks) == 0 {
		return
	}
	list := ps.byFirst[toks[0]]
	// Keep longest first, and a stronger kind first among equal lengths.
	i := 0
	for i < len(list) && (len(list[i].tokens) > len(toks) || len(list[i].tokens) == len(toks) && list[i].kind >= kind) {
		i++
	}
	list = append(list, nil)
	copy(list[i+1:], list[i:])
	list[i] = p
	ps.byFirst[toks[0]] = list
}

// match is a phrase found at tokens[start:start+len(p.tokens)].
type match struct {
	p     *phrase
	start int
}

// find returns the matches in toks, leftmost-longest, not overlapping.
func (ps *phraseSet) find(toks []string) []match {
	var out []match
	for i := 0; i < len(toks); {
		var best *phrase
		for _, p := range ps.byFirst[toks[i]] {
			if i+len(p.tokens) <= len(toks) && equalTokens(toks[i:i+len(p.tokens)], p.tokens) {
				best = p
				break
			}
		}
		if best == nil {
			i++
			continue
		}
		out = append(out, match{p: best, start: i})
		i += len(best.tokens)
	}
	return out
}

func equalTokens(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The phrase sets, built once.
var (
	notFoundSet = sync.OnceValue(func() *phraseSet {
		ps := &phraseSet{byFirst: map[string][]*phrase{}}
		for _, w := range notFoundFiller {
			ps.add(w, kindFiller, "")
		}
		for _, w := range notFoundWeak {
			ps.add(w, kindWeak, "")
		}
		for lang, list := range notFoundStrong {
			for _, w := range list {
				ps.add(w, kindStrong, lang)
			}
		}
		return ps
	})
	aboutSet = sync.OnceValue(func() *phraseSet {
		ps := &phraseSet{byFirst: map[string][]*phrase{}}
		for _, w := range aboutTerms {
			ps.add(w, kindAbout, "en")
		}
		return ps
	})
	parkedSet = sync.OnceValue(func() *phraseSet {
		ps := &phraseSet{byFirst: map[string][]*phrase{}}
		for group, table := range map[string]map[string][]string{
			groupSale: saleOffers, groupRegistrar: registrarNotices, groupParking: parkingWords,
		} {
			for lang, list := range table {
				for _, w := range list {
					ps.addTokens(&phrase{text: w, tokens: parkedPhraseTokens(w), kind: kindParked, lang: lang, group: group})
				}
			}
		}
		return ps
	})
)
