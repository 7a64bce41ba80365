package check

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/drift/textsim"
)

// signal returns the first signal of ev named name (and, when where is
// not "", found there), or nil.
func signal(ev *audit.Soft404Evidence, name, where string) *audit.Soft404Signal {
	if ev == nil {
		return nil
	}
	for i, s := range ev.Signals {
		if s.Name == name && (where == "" || s.Where == where) {
			return &ev.Signals[i]
		}
	}
	return nil
}

// docPage is a long documentation page about 404 errors, as Django's.
func docPage() string {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><title>Handling 404 errors in Django | Django documentation</title></head><body>
<nav><a href="/">Home</a></nav><main><h1>Handling 404 errors</h1>
<p>When a view raises Http404, Django returns a response with status code 404 and renders the
template 404.html. This page explains how to customize the "Page not found" view, how the
handler404 setting selects it, and how middleware sees the exception.</p>`)
	for i := range 30 {
		fmt.Fprintf(&b, `<h2>Section %d</h2><p>The function get_object_or_404 calls get on a given model manager, but it raises
Http404 instead of the model's DoesNotExist exception. Configure handler404 in your root URLconf to
point at a view of your own; the default view renders the template with the request path in the
context. Tests should assert that the response status code is 404 and that the page says the
object could not be found. Note %d.</p>`, i, i)
	}
	b.WriteString(`</main></body></html>`)
	return b.String()
}

// sedoLander is a parking lander like Sedo's.
func sedoLander(host string) string {
	return `<!DOCTYPE html><html><head><title>` + host + ` - This domain may be for sale!</title>
<script src="https://img.sedoparking.com/js/jquery.min.js"></script>
<script>var adBlock = 0; window.caf_config = {pubId: "dp-sedo80_3ph"};</script></head>
<body><div id="header"><a href="https://sedo.com/search/details/?domain=` + host + `&amp;origin=parking">Buy this domain</a></div>
<main><h1>` + host + `</h1><p>This domain may be for sale!</p><h2>Related Searches</h2>
<ul><li><a href="/?q=walking+boots">Walking Boots</a></li><li><a href="/?q=hiking">Hiking Gear</a></li><li><a href="/?q=boots+sale">Boots Sale</a></li></ul></main>
<footer>Copyright © Sedo. Privacy Policy</footer></body></html>`
}

// longArticle is a real article that mentions a domain for sale.
func longArticle() string {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><title>What happens to a domain when it expires</title></head><body><main>
<h1>What happens to a domain when it expires</h1>`)
	for i := range 25 {
		fmt.Fprintf(&b, `<p>Paragraph %d. When a registration lapses, the registrar keeps the name for a grace period; then it
is auctioned or released. Domainers buy expiring names in bulk and park them with advertising; some
show a banner saying this domain is for sale, and a marketplace listing invites offers. Readers who
follow an old link land on a page that has nothing to do with what was linked.</p>`, i)
	}
	b.WriteString(`</main></body></html>`)
	return b.String()
}

func fingerprintOf(body string) (uint64, int) {
	fp := fingerprintPage([]byte(body), "text/html", false, nil, false)
	return fp.simhash, fp.count
}

func TestSoft404_Signals(t *testing.T) {
	// An honest host: unknown URLs answer a real 404.
	honest := newServer(t)
	honest.handle("/gone/page", html200(`<!DOCTYPE html><html><head><title>Page not found</title></head><body>
<header><a href="/">Example</a></header><main><p>Sorry, the page you are looking for could not be found (error 404)</p></main></body></html>`))
	honest.handle("/docs/howto/404.html", html200(docPage()))
	honest.handle("/reviews/boots", html200(layout(article)))
	honest.handle("/old/report", redirect("/not-found", http.StatusFound))
	honest.handle("/not-found", html200(layout("<h1>Welcome</h1><p>Have a look around our shop: boots, bags and more.</p>")))
	honest.handle("/old/guide", redirect("/errors-and-warnings-guide.html", http.StatusMovedPermanently))
	honest.handle("/errors-and-warnings-guide.html", html200(layout("<h1>Errors and warnings</h1><p>What the compiler's messages mean and how to fix the code they point at, one by one.</p>")))
	honest.handle("/old/query", redirect("/shop?error=404", http.StatusFound))
	honest.handle("/shop", html200(layout("<h1>Shop</h1><p>Boots, bags and more, delivered tomorrow.</p>")))
	honest.handle("/old/errdir", redirect("/errors/404.html", http.StatusFound))
	honest.handle("/errors/404.html", html200(layout("<p>Lost? Try the search box.</p>")))

	// A host whose unknown URLs answer 200 with another template (a
	// marketing home page), and a real page.
	other := newServer(t)
	other.handle("/", html200(`<!DOCTYPE html><html><head><title>Example Travel</title></head><body><main>
<h1>Find your next trip</h1><p>Flights, hotels and cars at the best prices. Sign up for deals.</p></main></body></html>`))
	other.handle("/guides/lisbon", html200(`<!DOCTYPE html><html><head><title>Three days in Lisbon</title></head><body><main>
<h1>Three days in Lisbon</h1><p>Start in Alfama at dawn, before the trams fill up, and walk down to the river.
Lunch in Baixa, then take the 28 to Estrela. On the second day cross to Cacilhas on the ferry.</p></main></body></html>`))

	// A catch-all host echoing the URL's words into a page whose own
	// template uses some of those words too ("the", "for").
	echo := newServer(t)
	echo.handle("/", func(w http.ResponseWriter, r *http.Request) {
		words := strings.Join(textsim.Words(r.URL.Path), " ")
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!DOCTYPE html><html><head><title>%s | Shop</title></head><body><main>
<h1>Results for %s</h1><p>We searched the whole shop for %s and found nothing for the moment.
Check the spelling of %s, or browse the categories for the season. The best offers are on the home page.</p>
<p>You searched for: %s</p></main></body></html>`, words, words, words, words, words)
	})

	// A parked domain, and a real article mentioning a domain for sale.
	parked := newServer(t)
	parked.handle("/", html200(sedoLander("example-hiking.com")))
	real := newServer(t)
	real.handle("/blog/expired-domains", html200(longArticle()))

	articleHash, articleWords := fingerprintOf(layout(strings.Repeat(article, 4)))
	realHash, realWords := fingerprintOf(longArticle())

	tests := []struct {
		name   string
		target Target
		want   audit.Verdict
		check  func(t *testing.T, ev *audit.Soft404Evidence)
	}{
		{"WordsWithHonest404Probe", Target{URL: honest.URL + "/gone/page"}, audit.VerdictSoft404,
			func(t *testing.T, ev *audit.Soft404Evidence) {
				if ev.ProbeStatus != 404 || signal(ev, "probe", "").Score != 0 {
					t.Errorf("probe %d %+v", ev.ProbeStatus, signal(ev, "probe", ""))
				}
				if s := signal(ev, "words", "title"); s == nil || s.Score != weightTitle {
					t.Errorf("title signal %+v", s)
				}
				if s := signal(ev, "words", "text-start"); s == nil || s.Score != weightTextShort {
					t.Errorf("text-start signal %+v", s)
				}
			}},
		{"PageAbout404", Target{URL: honest.URL + "/docs/howto/404.html"}, audit.VerdictOK,
			func(t *testing.T, ev *audit.Soft404Evidence) {
				if ev.Score >= 0.5 {
					t.Errorf("score %v for a page about 404 errors: %+v", ev.Score, ev.Signals)
				}
			}},
		{"RealPageOtherTemplate", Target{URL: other.URL + "/guides/lisbon"}, audit.VerdictOK,
			func(t *testing.T, ev *audit.Soft404Evidence) {
				if ev.ProbeStatus != 200 || ev.Similarity > 0.3 || ev.Score != 0 {
					t.Errorf("probe %d similarity %v score %v", ev.ProbeStatus, ev.Similarity, ev.Score)
				}
			}},
		{"CatchAllEchoesURLWords", Target{URL: echo.URL + "/shop/the-best-boots-for-the-hills"}, audit.VerdictSoft404,
			func(t *testing.T, ev *audit.Soft404Evidence) {
				s := signal(ev, "probe", "")
				if ev.ProbeStatus != 200 || ev.Similarity < 0.9 || s == nil || s.Score != weightProbe ||
					!strings.Contains(s.Match, "before removing the words of the two URLs") {
					t.Errorf("probe %d similarity %v %+v", ev.ProbeStatus, ev.Similarity, s)
				}
			}},
		{"RedirectToNotFound", Target{URL: honest.URL + "/old/report"}, audit.VerdictSoft404,
			func(t *testing.T, ev *audit.Soft404Evidence) {
				if s := signal(ev, "error-url", "url"); s == nil || s.Score != weightErrorURL || !strings.Contains(s.Match, "/not-found") {
					t.Errorf("error-url signal %+v", s)
				}
			}},
		{"RedirectToErrorQuery", Target{URL: honest.URL + "/old/query"}, audit.VerdictSoft404, nil},
		{"RedirectToErrorsDir", Target{URL: honest.URL + "/old/errdir"}, audit.VerdictSoft404, nil},
		{"RedirectToErrorsGuide", Target{URL: honest.URL + "/old/guide"}, audit.VerdictMoved,
			func(t *testing.T, ev *audit.Soft404Evidence) {
				if signal(ev, "error-url", "") != nil || ev.Score != 0 {
					t.Errorf("signals %+v", ev.Signals)
				}
			}},
		{"ParkedAfterRealContent", Target{URL: parked.URL + "/trails/lake-district",
			Previous: &audit.Check{RunID: 3, Verdict: audit.VerdictOK, SHA256: "x", SimHash: articleHash, Words: articleWords}},
			audit.VerdictParked,
			func(t *testing.T, ev *audit.Soft404Evidence) {
				if s := signal(ev, "parked", "html"); s == nil || !strings.Contains(s.Match, "sedoparking.com") {
					t.Errorf("parked html signal %+v", ev.Signals)
				}
				if s := signal(ev, "drift", "fingerprint"); s == nil || s.Score != weightDriftSharp || !strings.Contains(s.Match, "run 3") {
					t.Errorf("drift signal %+v", s)
				}
				if ev.Parked < 1 {
					t.Errorf("parked score %v", ev.Parked)
				}
			}},
		{"ParkedFirstSeen", Target{URL: parked.URL + "/"}, audit.VerdictParked, nil},
		{"ArticleMentionsDomainForSale", Target{URL: real.URL + "/blog/expired-domains",
			Previous: &audit.Check{RunID: 3, Verdict: audit.VerdictOK, SHA256: "x", SimHash: realHash, Words: realWords}},
			audit.VerdictOK,
			func(t *testing.T, ev *audit.Soft404Evidence) {
				if ev.Parked != 0 || signal(ev, "parked", "text") == nil {
					t.Errorf("parked %v %+v", ev.Parked, ev.Signals)
				}
			}},
		{"ArticleMentionsDomainForSaleFirstSeen", Target{URL: real.URL + "/blog/expired-domains"}, audit.VerdictOK, nil},
	}
	c := New(testOptions())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := c.CheckOne(context.Background(), tt.target)
			if got.Verdict != tt.want {
				t.Fatalf("verdict %q (%s), want %q; evidence %+v", got.Verdict, got.Reason, tt.want, got.Soft404)
			}
			if got.Soft404 == nil {
				t.Fatal("no soft-404 evidence")
			}
			if tt.want == audit.VerdictSoft404 && (got.Soft404.Score < 1 || !strings.HasPrefix(got.Reason, "soft 404 (score ")) {
				t.Errorf("score %v, reason %q", got.Soft404.Score, got.Reason)
			}
			if tt.want == audit.VerdictParked && (!got.Verdict.Broken() || !strings.HasPrefix(got.Reason, "parked domain (score ")) {
				t.Errorf("reason %q", got.Reason)
			}
			if tt.check != nil {
				tt.check(t, got.Soft404)
			}
			t.Logf("%s: %s", got.Verdict, got.Reason)
		})
	}
}

// TestShingleSet: the sorted shingle sets are textsim's sets, and their
// Jaccard index textsim's.
func TestShingleSet(t *testing.T) {
	texts := []string{"", "one", "one two", "a b c d e f a b c", docPage(), longArticle(), layout(article),
		"页面不存在 页面 ページが見つかりません", strings.Repeat("x y ", 50)}
	for _, a := range texts {
		wa := textsim.Words(textsim.MainText([]byte(a)))
		for k := 0; k <= 4; k++ {
			got, want := shingleSet(wa, k), textsim.Shingles(wa, k)
			if len(got) != len(want) || !slices.IsSorted(got) {
				t.Fatalf("shingleSet(%.20q, %d): %d hashes, textsim %d", a, k, len(got), len(want))
			}
			for _, h := range got {
				if _, ok := want[h]; !ok {
					t.Fatalf("shingleSet(%.20q, %d): hash %x not textsim's", a, k, h)
				}
			}
		}
		for _, b := range texts {
			wb := textsim.Words(textsim.MainText([]byte(b)))
			got := jaccardSorted(shingleSet(wa, 3), shingleSet(wb, 3))
			want := textsim.Jaccard(textsim.Shingles(wa, 3), textsim.Shingles(wb, 3))
			if got != want {
				t.Errorf("jaccardSorted(%.20q, %.20q) = %v, textsim %v", a, b, got, want)
			}
		}
	}
}

// TestSoft404_Phrases: titles and headings per language, statements and
// not.
func TestSoft404_Phrases(t *testing.T) {
	tests := []struct {
		lang, text string
		full       bool // a not-found statement
	}{
		{"en", "Page not found", true},
		{"en", "404 Not Found", true},
		{"en", "Oops! That page can’t be found. – My Blog", true},
		{"en", "Sorry, we couldn't find that page", true},
		{"en", "Error 404 | Example Shop", true},
		{"en", "404", true},
		{"en", "This page is no longer available", true},
		{"en", "Handling 404 errors in Django", false},
		{"en", "Not Found Objects in Python", false},
		{"en", "Found: the lost city", false},
		{"en", "Errors and warnings", false},
		{"de", "Seite nicht gefunden", true},
		{"de", "Fehler 404 – Die angeforderte Seite existiert nicht", true},
		{"de", "Diese Seite ist leider nicht mehr verfügbar", true},
		{"de", "Gefundene Objekte im Wald", false},
		{"fr", "Page introuvable", true},
		{"fr", "Erreur 404 : la page que vous recherchez n’existe pas", true},
		{"fr", "Gérer les erreurs 404 avec Apache", false},
		{"es", "Página no encontrada", true},
		{"es", "Lo sentimos, la página que buscas no existe", true},
		{"es", "Pagina no encontrada", true}, // without the accent
		{"es", "Cómo encontrar una página", false},
		{"it", "Pagina non trovata", true},
		{"it", "Errore 404: la pagina che stai cercando non esiste", true},
		{"it", "Come trovare un buon ristorante", false},
		{"nl", "Pagina niet gevonden", true},
		{"nl", "Helaas, deze pagina bestaat niet meer", true},
		{"nl", "Gevonden voorwerpen", false},
		{"pt", "Página não encontrada", true},
		{"pt", "Erro 404 - A página que você procura não existe", true},
		{"pt", "Encontrada a solução", false},
		{"ru", "Страница не найдена", true},
		{"ru", "Ошибка 404. Такой страницы не существует", true},
		{"ru", "Как найти работу", false},
		{"ja", "ページが見つかりません", true},
		{"ja", "お探しのページは見つかりませんでした", true},
		{"ja", "ページを探す方法", false},
		{"zh", "页面不存在", true},
		{"zh", "抱歉，您访问的页面不存在", true},
		{"zh", "找不到頁面", true},
		{"zh", "页面设计指南", false},
		{"zh", "如何处理404错误的完整指南", false},
	}
	set := notFoundSet()
	for _, tt := range tests {
		full, part := statement(set, tt.text, true, nil)
		if (full != "") != tt.full {
			t.Errorf("%s %q: statement %q (part %q), want a statement: %v", tt.lang, tt.text, full, part, tt.full)
		}
	}
	// The body: a phrase at the start of a short text, not in an unrelated one.
	bodies := []struct {
		lang, text string
		want       bool
	}{
		{"en", "Sorry, the page you are looking for could not be found (error 404)", true},
		{"de", "Leider konnte die Seite nicht gefunden werden.", true},
		{"fr", "La page demandée n'existe pas ou a été déplacée.", true},
		{"es", "La página solicitada no existe.", true},
		{"it", "La pagina richiesta non è più disponibile.", true},
		{"nl", "De pagina die u zoekt bestaat niet.", true},
		{"pt", "A página solicitada não foi encontrada.", true},
		{"ru", "Запрашиваемая страница не найдена.", true},
		{"ja", "申し訳ございません。お探しのページは見つかりませんでした。", true},
		{"zh", "抱歉，您要找的页面不存在或已被删除。", true},
		{"en", "Notfoundation is a charity that finds homes for lost dogs.", false},
		{"de", "Wir haben das Rezept gefunden, das Sie suchen.", false},
		{"zh", "我们的团队找到了新的办公室。", false},
	}
	for _, tt := range bodies {
		sigs := wordSignals(nil, foldTokens(textsim.Words(tt.text)), 20, nil)
		got := len(sigs) > 0 && sigs[0].Where == "text-start" && sigs[0].Score == weightTextShort
		if got != tt.want {
			t.Errorf("%s %q: %+v, want a text-start signal: %v", tt.lang, tt.text, sigs, tt.want)
		}
	}
}

func TestErrorURLPart(t *testing.T) {
	tests := []struct {
		url  string
		want bool
	}{
		{"/404", true}, {"/404.html", true}, {"/not-found", true}, {"/not_found/", true},
		{"/page-not-found", true}, {"/PageNotFound.aspx", true}, {"/error", true}, {"/errors/404.html", true},
		{"/error/500", true}, {"/en/404/", true}, {"/?error=404", true}, {"/home?status=410", true},
		{"/Error.aspx?aspxerrorpath=/old/page", true}, {"/handler?404;http://example.com/old", true},
		{"/seite-nicht-gefunden", true}, {"/login?error=true", true},
		{"/errors-and-warnings-guide.html", false}, {"/errors/", true}, {"/errors/handling.html", false},
		{"/error-handling", false}, {"/docs/404-pages-explained", false}, {"/blog/2024/04/", false},
		{"/search?q=error", false}, {"/?code=200", false}, {"/products/4040", false},
	}
	for _, tt := range tests {
		u, err := url.Parse("https://example.com" + tt.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := errorURLPart(u); (got != "") != tt.want {
			t.Errorf("errorURLPart(%s) = %q, want an error URL: %v", tt.url, got, tt.want)
		}
	}
}

func TestParkingFingerprints(t *testing.T) {
	tests := []struct {
		name, html string
		want       []string
	}{
		{"SedoScript", sedoLander("x.com"), []string{"infra:sedoparking.com", "var:AdSense for Domains pubId", "link:sedo.com/search/details",
			"offer:https://sedo.com/search/details/?domain=x.com&origin=parking"}},
		{"BodisFrame", `<html><body><iframe src="//bodis.com/lander?d=x.com"></iframe></body></html>`, []string{"infra:bodis.com"}},
		{"ParkingCrewInline", `<html><head><script>window.location.href="http://www.parkingcrew.net/?d=x"</script></head></html>`, []string{"infra:parkingcrew.net"}},
		{"GoDaddyLander", `<html><head><script src="https://img1.wsimg.com/parking-lander/static/js/main.js"></script></head><body><a href="https://www.godaddy.com/domainsearch/find?domainToCheck=x.com">Get this domain</a></body></html>`,
			[]string{"infra:wsimg.com/parking-lander", "link:godaddy.com/domainsearch", "offer:https://www.godaddy.com/domainsearch/find?domainToCheck=x.com"}},
		{"Refresh", `<html><head><meta http-equiv="Refresh" content="0; URL='https://www.hugedomains.com/domain_profile.cfm?d=x'"></head></html>`, []string{"infra:hugedomains.com", "goto:https://www.hugedomains.com/domain_profile.cfm?d=x"}},
		{"DanLink", `<html><body><a href="https://dan.com/buy-domain/x.com">Buy</a></body></html>`, []string{"link:dan.com/buy-domain", "offer:https://dan.com/buy-domain/x.com"}},
		{"AfternicLink", `<html><body><a href="https://www.afternic.com/domain/x.com">Make an offer</a></body></html>`, []string{"link:afternic.com/domain", "offer:https://www.afternic.com/domain/x.com"}},
		{"AboveScript", `<html><head><script src="https://park.above.com/js/park.js"></script></head></html>`, []string{"infra:above.com"}},
		{"AdblockKey", `<html data-adblockkey="MFww"><body></body></html>`, []string{"var:data-adblockkey"}},
		{"WindowPark", `<html><body><script>window.park = "eyJ1dWlkIjoi";</script><script src="/bx.js"></script></body></html>`, []string{"var:window.park"}},
		{"ParkedDomainAds", `<html><head><script async src="https://www.google.com/adsense/domains/caf.js?abp=1"></script></head></html>`, []string{"ads:google.com/adsense/domains"}},
		{"ParkedDomainAdsLoader", `<script>var s=document.createElement("script");s.src="//www.google.com/adsense/domains/caf.js";</script>`, []string{"ads:google.com/adsense/domains"}},
		{"ScriptToWW", `<script>top.location.href = 'http://ww25.x.com/?subid1=' + Date.now();</script>`, []string{"goto:http://ww25.x.com/?subid1="}},
		{"ScriptToMarketplace", `<script>window.location.replace("https://www.afternic.com/forsale/x.com?traffic_type=TDFS")</script>`,
			[]string{"infra:afternic.com", "goto:https://www.afternic.com/forsale/x.com?traffic_type=TDFS"}},
		{"RenewLink", `<a href="https://www.networksolutions.com/my-account/renew?domain=x.com">Renew</a>`, []string{"renew:https://www.networksolutions.com/my-account/renew?domain=x.com"}},
		{"ScriptToElsewhere", `<script>if (location.href == "http://x.com/a") { location.href = "https://www.x.com/b"; }</script>`, nil},
		{"SearchAdsNotParking", `<script src="https://www.google.com/adsense/search/ads.js"></script><script>var pageOptions = {pubId: "partner-pub-123"};</script>`, nil},
		{"LookalikeAdsHost", `<script src="https://notgoogle.com/adsense/domains/caf.js"></script>`, nil},
		{"LinkToSedoHome", `<html><body><a href="https://sedo.com/">Sedo</a> is a marketplace.</body></html>`, nil},
		{"LookalikeHost", `<html><head><script src="https://notsedoparking.com.evil.example/x.js"></script></head></html>`, nil},
		{"PlainPage", `<html><head><script src="/app.js"></script></head><body><a href="https://example.com/">x</a></body></html>`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp := fingerprintPage([]byte(tt.html), "text/html", false, nil, false)
			var got []string
			if fp.signals != nil {
				got = fp.signals.Parking
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("parking fingerprints %q, want %q", got, tt.want)
			}
		})
	}
}

// TestSoft404_KnownPage: a page of the site judged from the crawl's
// response is classified with the same signals (title and heading from
// the stored PageSignals).
func TestSoft404_KnownPage(t *testing.T) {
	s := newServer(t) // unknown URLs: 404
	u := s.URL + "/gone.html"
	body := `<!DOCTYPE html><html><head><title>Seite nicht gefunden</title></head><body><main><h1>Fehler 404</h1><p>Die angeforderte Seite existiert nicht mehr.</p></main></body></html>`
	ev := Observe(200, http.Header{"Content-Type": {"text/html"}}, []byte(body), true, 0, nil)
	if ev == nil || ev.Signals == nil || ev.Signals.Title != "Seite nicht gefunden" {
		t.Fatalf("evidence %+v", ev)
	}
	k := &Known{FinalURL: u, Status: 200, ContentType: "text/html", Evidence: *ev}
	got := New(testOptions()).CheckOne(context.Background(), Target{URL: u, Known: k})
	if got.Verdict != audit.VerdictSoft404 || !got.FromCrawl || signal(got.Soft404, "words", "title") == nil || signal(got.Soft404, "words", "h1") == nil {
		t.Fatalf("%q %s %+v", got.Verdict, got.Reason, got.Soft404)
	}
	// Offline (a local directory): no probe, the words still count.
	k.Offline = true
	got = New(testOptions()).CheckOne(context.Background(), Target{URL: u, Known: k})
	if got.Verdict != audit.VerdictSoft404 || got.Soft404.ProbeURL != "" {
		t.Fatalf("offline: %q %s %+v", got.Verdict, got.Reason, got.Soft404)
	}
}

func TestSoft404_Disabled(t *testing.T) {
	s := newServer(t)
	s.handle("/gone", html200(`<html><head><title>Page not found</title></head><body><p>Sorry, this page does not exist.</p></body></html>`))
	s.handle("/old", redirect("/404", http.StatusFound))
	s.handle("/404", html200(`<html><body><p>x</p></body></html>`))
	o := testOptions()
	o.DisableSoft404 = true
	for _, p := range []string{"/gone", "/old"} {
		got := New(o).CheckOne(context.Background(), Target{URL: s.URL + p})
		if got.Verdict.Broken() || got.Soft404 != nil {
			t.Errorf("%s with --no-soft404: %q %+v", p, got.Verdict, got.Soft404)
		}
	}
}

// FuzzSoft404Classify: any page, URL and probe answer is classified
// without panicking, with finite scores and a verdict the scores justify.
func FuzzSoft404Classify(f *testing.F) {
	f.Add(`<title>Page not found</title><h1>404</h1><p>Sorry</p>`, "/a/b?error=404", `<p>nothing here</p>`, 200, true)
	f.Add(sedoLander("x.com"), "/", "", 404, false)
	f.Add(docPage(), "/docs/404.html", "<main>x</main>", 200, false)
	f.Add("<title>ページが見つかりません</title>\x00\xff<h1>页面不存在", "/%zz/é", "", 0, true)
	f.Fuzz(func(t *testing.T, page, path, probePage string, probeStatus int, redirected bool) {
		start, err := url.Parse("https://example.com/x/y")
		if err != nil {
			t.Fatal(err)
		}
		final := start
		var redirects []audit.Redirect
		if redirected {
			if u, err := url.Parse("https://example.com" + path); err == nil {
				final = u
				redirects = []audit.Redirect{{From: start.String(), To: u.String(), Status: 302}}
			}
		}
		fp := fingerprintPage([]byte(page), "text/html", true, nil, false)
		pw := textsim.Words(textsim.MainText([]byte(probePage)))
		probe := &probeResult{url: "https://example.com/x/zzzz", final: "https://example.com/x/zzzz", status: probeStatus,
			words: pw, shingles: shingleSet(pw, soft404Shingle), urlWords: map[string]bool{"x": true}}
		ref := &audit.Check{SHA256: "r", SimHash: 12345, Words: 300}
		res := classifySoft404(&soft404Input{start: start, final: final, redirects: redirects, words: fp.words,
			count: fp.count, page: fp.signals, simhash: fp.simhash, probe: probe, reference: ref, probeThreshold: 0.9})
		ev := res.ev
		if ev == nil {
			t.Fatal("no evidence with a probe")
		}
		for _, x := range []float64{ev.Score, ev.Parked, ev.Similarity} {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("score not finite: %+v", ev)
			}
		}
		switch res.verdict {
		case audit.VerdictParked:
			if ev.Parked < 1 {
				t.Fatalf("parked with score %v", ev.Parked)
			}
		case audit.VerdictSoft404:
			if ev.Score < 1 || ev.Parked >= 1 {
				t.Fatalf("soft-404 with scores %v %v", ev.Score, ev.Parked)
			}
		case "":
			if ev.Score >= 1 || ev.Parked >= 1 {
				t.Fatalf("no verdict with scores %v %v", ev.Score, ev.Parked)
			}
		default:
			t.Fatalf("verdict %q", res.verdict)
		}
	})
}

// TestSoft404_NamedByURL: a title and heading that say only a number the
// URL carries name the page ("Page 404" at /p/404, one of /p/0 … /p/4999),
// and are no evidence; the same words at a URL without the number, or with
// a not-found statement beside the number, still are.
func TestSoft404_NamedByURL(t *testing.T) {
	tests := []struct {
		url, page string
		soft404   bool
	}{
		{"https://example.com/p/404", "<title>Page 404</title><h1>Page 404</h1><p>word404 text</p>", false},
		{"https://example.com/chapters?n=410", "<title>410</title><h1>410</h1><p>text</p>", false},
		{"https://example.com/p/4040", "<title>Page 404</title><h1>Page 404</h1><p>text</p>", true},
		{"https://example.com/p/other", "<title>Page 404</title><h1>Page 404</h1><p>text</p>", true},
		{"https://example.com/p/404", "<title>404 Not Found</title><h1>Page not found</h1><p>text</p>", true},
		{"https://example.com/p/404", "<title>Page 404 | Page not found</title><h1>Page not found</h1><p>text</p>", true},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		fp := fingerprintPage([]byte(tt.page), "text/html", false, nil, false)
		res := classifySoft404(&soft404Input{start: u, final: u, words: fp.words, count: fp.count, page: fp.signals, simhash: fp.simhash})
		if got := res.verdict == audit.VerdictSoft404; got != tt.soft404 {
			t.Errorf("%s %q: soft-404 %v, want %v (%+v)", tt.url, tt.page, got, tt.soft404, res.ev)
		}
	}
}

// TestParkingURLs_SameAsParsingEvery: parkingHostOf and marketplaceOf,
// which return "" for a value without "//" before parsing it, give what
// parsing every value gives.
func TestParkingURLs_SameAsParsingEvery(t *testing.T) {
	ref := func(raw string, paths []string, hosts bool) string {
		raw = strings.TrimSpace(raw)
		if strings.HasPrefix(raw, "//") {
			raw = "http:" + raw
		}
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return ""
		}
		host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
		if hosts {
			for _, h := range parkingHosts {
				if host == h || strings.HasSuffix(host, "."+h) {
					return h
				}
			}
		}
		hp := host + strings.ToLower(u.EscapedPath())
		for _, p := range paths {
			if hasHostPathPrefix(hp, p) {
				return p
			}
		}
		return ""
	}
	pieces := []string{"http:", "https:", "//", "/", " ", "sedo.com", "SEDO.COM", "www.", "dan.com", "/buy-domain",
		"/search/details", "sedoparking.com", "wsimg.com", "/parking-lander", "?", "#", "%2E", "x", ":80", "\t", "\\\\", "@"}
	r := rand.New(rand.NewPCG(8, 9))
	found := 0
	for range 50000 {
		var sb strings.Builder
		for range r.IntN(7) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := sb.String()
		if got, want := parkingHostOf(s), ref(s, parkingPaths, true); got != want {
			t.Fatalf("parkingHostOf(%q) = %q, want %q", s, got, want)
		}
		if got, want := marketplaceOf(s), ref(s, marketplacePaths, false); got != want {
			t.Fatalf("marketplaceOf(%q) = %q, want %q", s, got, want)
		} else if want != "" {
			found++
		}
	}
	if found == 0 {
		t.Fatal("no marketplace found: the test compares nothing")
	}
}
