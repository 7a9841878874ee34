// Package browser runs real headless Chromium (Debian's chromium package,
// installed by scripts/deps) for the tests of loopguard serve's page,
// driven over the DevTools protocol with chromedp, with the protocol's
// virtual WebAuthn authenticator standing in for the human's passkey.
//
// Start fails the test when Chromium is missing and make test demanded it
// (LOOPGUARD_REQUIRE_CHROMIUM=1); otherwise it skips. Nothing here prints.
package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"
)

// Path finds Chromium: $LOOPGUARD_CHROMIUM, or chromium on PATH.
func Path() (string, error) {
	if p := os.Getenv("LOOPGUARD_CHROMIUM"); p != "" {
		return p, nil
	}
	return exec.LookPath("chromium")
}

// Browser is one headless Chromium with one tab.
type Browser struct {
	Ctx  context.Context
	Auth webauthn.AuthenticatorID // the tab's virtual authenticator, once added
	t    testing.TB
}

// Start launches Chromium with a fresh profile and the flags it needs in
// a container (no sandbox, no GPU, no QUIC, no first-run, no background
// networking, component updates or sync), plus flags (extra switches such
// as host-resolver-rules, as name, value pairs). It is stopped when the
// test ends.
func Start(t testing.TB, flags ...any) *Browser {
	t.Helper()
	path, err := Path()
	if err != nil {
		if os.Getenv("LOOPGUARD_REQUIRE_CHROMIUM") == "1" {
			t.Fatalf("LOOPGUARD_REQUIRE_CHROMIUM=1 but Chromium is missing (%v): scripts/deps installs Debian's chromium", err)
		}
		t.Skipf("needs Chromium (%v): scripts/deps installs it (make test)", err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-features", "Translate,MediaRouter,OptimizationHints"),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	for i := 0; i+1 < len(flags); i += 2 {
		opts = append(opts, chromedp.Flag(flags[i].(string), flags[i+1]))
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelA() })
	if _, err := chromedp.Run(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("failed to start Chromium %s: %v", path, err)
	}
	return &Browser{Ctx: ctx, t: t}
}

// AddAuthenticator gives the tab a virtual platform authenticator (CTAP2.1,
// resident keys, user verification that succeeds, presence simulated): a
// passkey on a phone that its owner unlocks.
func (b *Browser) AddAuthenticator() {
	b.t.Helper()
	ctx := b.Ctx
	if _, err := chromedp.Call(ctx, webauthn.Enable, webauthn.EnableParams{}); err != nil {
		b.t.Fatalf("WebAuthn.enable: %v", err)
	}
	res, err := chromedp.Call(ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{Options: &webauthn.VirtualAuthenticatorOptions{
		Protocol: webauthn.AuthenticatorProtocolCtap2, Ctap2version: webauthn.Ctap2versionCtap21,
		Transport: webauthn.AuthenticatorTransportInternal, HasResidentKey: true, HasUserVerification: true,
		IsUserVerified: true, AutomaticPresenceSimulation: true,
	}})
	if err != nil {
		b.t.Fatalf("WebAuthn.addVirtualAuthenticator: %v", err)
	}
	b.Auth = res.AuthenticatorID
}

// Credentials counts the passkeys the virtual authenticator holds.
func (b *Browser) Credentials() int {
	b.t.Helper()
	res, err := chromedp.Call(b.Ctx, webauthn.GetCredentials, webauthn.GetCredentialsParams{AuthenticatorID: b.Auth})
	if err != nil {
		b.t.Fatalf("WebAuthn.getCredentials: %v", err)
	}
	return len(res.Credentials)
}

// Do runs steps, failing the test on an error.
func (b *Browser) Do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.Ctx, steps...); err != nil {
		b.t.Fatal(err)
	}
}

// Eval evaluates a JavaScript expression in the page (a promise is
// awaited) and decodes its JSON value into v.
func (b *Browser) Eval(js string, v any) error {
	raw, err := chromedp.Run(b.Ctx, chromedp.Evaluate[json.RawMessage](js, chromedp.EvalAwaitPromise))
	if err != nil {
		return err
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(raw, v)
}

// WaitJS waits until the JavaScript expression is true, up to d.
func (b *Browser) WaitJS(js string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		var ok bool
		err := b.Eval("Boolean("+js+")", &ok)
		if err == nil && ok {
			return nil
		}
		if time.Now().After(deadline) {
			var html string
			_ = b.Eval("document.body ? document.body.innerText : ''", &html)
			return fmt.Errorf("waited %s for %s (last error %v); the page says:\n%s", d, js, err, html)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Screenshot takes a PNG of the page at width x height CSS pixels (scale
// device pixels each), mobile (touch, phone viewport) or not.
func (b *Browser) Screenshot(width, height int64, scale float64, mobile bool) []byte {
	b.t.Helper()
	vo := []chromedp.EmulateViewportOption{chromedp.EmulateScale(scale)}
	if mobile {
		vo = append(vo, chromedp.EmulateMobile)
	}
	png, err := chromedp.Run(b.Ctx, chromedp.Steps(chromedp.EmulateViewport(width, height, vo...), chromedp.Sleep(300*time.Millisecond)))
	_ = png
	if err != nil {
		b.t.Fatal(err)
	}
	shot, err := chromedp.Run(b.Ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatal(err)
	}
	return shot
}

// Open navigates to url and waits until the page's script has drawn it
// (selector ready, up to d).
func (b *Browser) Open(url, ready string, d time.Duration) error {
	if _, err := chromedp.Run(b.Ctx, chromedp.Navigate(url)); err != nil {
		return err
	}
	return b.WaitJS(fmt.Sprintf("document.querySelector(%q)", ready), d)
}

// Click clicks the element selector names, as the page's own handler
// sees a click.
func (b *Browser) Click(selector string) error {
	var ok bool
	if err := b.Eval(fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return false; e.click(); return true; })()`, selector), &ok); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("no element %s to click", selector)
	}
	return nil
}

// Type sets the value of the text field selector names.
func (b *Browser) Type(selector, text string) error {
	var ok bool
	if err := b.Eval(fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return false; e.value = %q; e.dispatchEvent(new Event("input")); return true; })()`, selector, text), &ok); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("no field %s", selector)
	}
	return nil
}

// Center returns the viewport coordinates of the middle of the element
// selector names, scrolled into view first.
func (b *Browser) Center(selector string) (x, y float64, err error) {
	var p struct {
		X, Y float64
		OK   bool
	}
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return {OK: false}; e.scrollIntoView({block: "center"}); const r = e.getBoundingClientRect(); return {X: r.x + r.width / 2, Y: r.y + r.height / 2, OK: true}; })()`, selector)
	if err := b.Eval(js, &p); err != nil {
		return 0, 0, err
	}
	if !p.OK {
		return 0, 0, fmt.Errorf("no element %s", selector)
	}
	return p.X, p.Y, nil
}

// MouseMove moves the mouse pointer to x, y, as a human's hand does (the
// browser's own input, trusted by the page).
func (b *Browser) MouseMove(x, y float64) error {
	_, err := chromedp.Call(b.Ctx, input.DispatchMouseEvent, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: x, Y: y})
	return err
}

// MouseClick presses and releases the left button where the pointer is
// (x, y), without moving it: a click from a hand that rested there.
func (b *Browser) MouseClick(x, y float64) error {
	for _, typ := range []input.DispatchMouseEventType{input.DispatchMouseEventTypeMousePressed, input.DispatchMouseEventTypeMouseReleased} {
		if _, err := chromedp.Call(b.Ctx, input.DispatchMouseEvent, input.DispatchMouseEventParams{Type: typ, X: x, Y: y,
			Button: input.MouseButtonLeft, Buttons: 1, ClickCount: 1}); err != nil {
			return err
		}
	}
	return nil
}
