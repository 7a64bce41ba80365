// Package browsertest drives Debian's Chromium headless over the DevTools
// protocol (chromedp) for the tests of the pages people read: the HTML
// report and the dashboard. A Browser records every console error,
// uncaught exception, security or CSP log entry and JavaScript dialog, so
// that a test can fail on any of them with Check.
//
// Chromium is found at $LINKROT_CHROMIUM or on the PATH (Debian's
// /usr/bin/chromium first). Without it, New skips the test, or fails it
// when LINKROT_REQUIRE_CHROMIUM=1 (CI installs the package). The launch
// flags are those a root process on a machine with no network needs:
// --no-sandbox, and no background networking, component updates or sync
// (their connections are refused there, many at a time).
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Options configure New. The zero value is a 1280×900 window, 90 s for
// the whole test, and every log entry of level error recorded.
type Options struct {
	Width, Height int
	// Timeout bounds everything the browser does for the test (default 90s).
	Timeout time.Duration
	// IgnoreLog, when set, drops log entries whose URL it accepts (the
	// browser's own favicon request, say).
	IgnoreLog func(url string) bool
}

// Browser is one headless Chromium for one test. Its methods fail the
// test on a DevTools error; they are not safe for concurrent use, but the
// problem list is (events arrive on chromedp's goroutines).
type Browser struct {
	// Ctx is the chromedp context of the browser's tab.
	Ctx      context.Context
	mu       sync.Mutex
	problems []string
}

// Find returns the Chromium executable to use, or "" when there is none.
func Find() string {
	if p := os.Getenv("LINKROT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// New starts a headless Chromium with a fresh profile, stopped and
// removed when the test ends.
func New(t *testing.T, o Options) *Browser {
	t.Helper()
	exe := Find()
	if exe == "" {
		if os.Getenv("LINKROT_REQUIRE_CHROMIUM") == "1" {
			t.Fatal("no Chromium found and LINKROT_REQUIRE_CHROMIUM=1 (CI installs Debian's chromium)")
		}
		t.Skip("no Chromium found: install Debian's chromium (apt-get install -y chromium; .ci/run does) or set LINKROT_CHROMIUM")
	}
	if o.Width == 0 || o.Height == 0 {
		o.Width, o.Height = 1280, 900
	}
	if o.Timeout == 0 {
		o.Timeout = 90 * time.Second
	}
	profile, err := os.MkdirTemp("", "linkrot-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(o.Width, o.Height),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, o.Timeout)
	t.Cleanup(func() {
		cancelTimeout()
		cancelCtx()
		cancelAlloc()
		// Helper processes may still write into the profile for a moment.
		for i := 0; i < 50; i++ {
			if err := os.RemoveAll(profile); err == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("could not remove the browser profile %s", profile)
	})
	b := &Browser{Ctx: ctx}
	chromedp.ListenTarget(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError || ev.Type == runtime.APITypeAssert || ev.Type == runtime.APITypeWarning {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				b.Problem("console." + string(ev.Type) + ": " + strings.Join(parts, " "))
			}
		case *runtime.EventExceptionThrown:
			desc := ""
			if ev.ExceptionDetails.Exception != nil {
				desc = ev.ExceptionDetails.Exception.Description
			}
			b.Problem("exception: " + ev.ExceptionDetails.Text + " " + desc)
		case *cdplog.EventEntryAdded:
			if o.IgnoreLog != nil && o.IgnoreLog(ev.Entry.URL) {
				return
			}
			if ev.Entry.Level == cdplog.LevelError || ev.Entry.Source == cdplog.SourceSecurity || ev.Entry.Source == cdplog.SourceViolation {
				b.Problem("log " + string(ev.Entry.Source) + "/" + string(ev.Entry.Level) + ": " + ev.Entry.Text)
			}
		case *cdppage.EventJavascriptDialogOpening:
			b.Problem("dialog opened: " + ev.Message)
			go chromedp.Run(ctx, cdppage.HandleJavaScriptDialog(false))
		}
	})
	// Recorded before any script of the page runs; DevTools scripts are not
	// subject to the page's CSP.
	const watch = `window.__csp = []; document.addEventListener('securitypolicyviolation', function (e) { window.__csp.push(e.violatedDirective + ' ' + e.blockedURI); });`
	err = chromedp.Run(ctx, cdplog.Enable(), chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := cdppage.AddScriptToEvaluateOnNewDocument(watch).Do(ctx)
		return err
	}))
	if err != nil {
		t.Fatalf("start %s: %v", exe, err)
	}
	return b
}

// Problem records a problem for the next Check.
func (b *Browser) Problem(s string) {
	b.mu.Lock()
	b.problems = append(b.problems, s)
	b.mu.Unlock()
}

// Check fails the test for any problem recorded so far, any CSP violation
// and any sign that a payload ran (window.__xss set), then forgets them.
func (b *Browser) Check(t *testing.T, where string) {
	t.Helper()
	var csp []string
	var xss bool
	if err := chromedp.Run(b.Ctx,
		chromedp.Evaluate(`window.__csp || []`, &csp),
		chromedp.Evaluate(`window.__xss !== undefined`, &xss),
	); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	for _, v := range csp {
		t.Errorf("%s: CSP violation: %s", where, v)
	}
	if xss {
		t.Errorf("%s: a script payload ran (window.__xss is set)", where)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.problems {
		t.Errorf("%s: %s", where, p)
	}
	b.problems = nil
}

// Eval evaluates js in the page into out.
func (b *Browser) Eval(t *testing.T, js string, out any) {
	t.Helper()
	if err := chromedp.Run(b.Ctx, chromedp.Evaluate(js, out)); err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
}

// Open navigates to u and waits for its body.
func (b *Browser) Open(t *testing.T, u string) {
	t.Helper()
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(u), chromedp.WaitReady(`body`)); err != nil {
		t.Fatalf("open %s: %v", u, err)
	}
}

// WaitFor polls the boolean expression js until it holds, failing the
// test after 10 s; what names it in the failure.
func (b *Browser) WaitFor(t *testing.T, what, js string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var ok bool
		// A navigation in progress makes Evaluate fail: retry.
		if err := chromedp.Run(b.Ctx, chromedp.Evaluate(js, &ok)); err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Screenshot saves a PNG of the page as name in $LINKROT_SCREENSHOTS (a
// temporary directory when unset) and logs its path.
func (b *Browser) Screenshot(t *testing.T, name string) {
	t.Helper()
	var png []byte
	if err := chromedp.Run(b.Ctx, chromedp.Sleep(100*time.Millisecond), chromedp.CaptureScreenshot(&png)); err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("LINKROT_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}
