package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Push tells the human's phone that a call waits, through their own ntfy
// topic, with nothing of the call in it: the push goes through a server
// that is not theirs, so it says only that a call waits and links to the
// console, where the call is shown after a sign-in with the passkey.
type Push struct {
	// URL is the ntfy topic (config notify.ntfy.url).
	URL string
	// Token is the topic's access token, if it needs one.
	Token string
	// Click is the console's address, opened when the push is tapped.
	Click string
	// Client sends it (a client with a 10 s timeout when nil).
	Client *http.Client
}

// Text is the whole push: its title and message for n waiting calls. It
// holds no command, path or argument of any call, nor an id.
func (p *Push) Text(n int) (title, message string) {
	title = "loopguard: a call waits for you"
	message = "A call is held for your decision. Open the console to see it."
	if n > 1 {
		message = fmt.Sprintf("%d calls wait for your decision. Open the console to see them.", n)
	}
	return title, message
}

// Send publishes the push (ntfy's publish API: a POST of the message to
// the topic URL, with Title, Priority, Tags and Click headers).
func (p *Push) Send(ctx context.Context, n int) error {
	title, msg := p.Text(n)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL, strings.NewReader(msg))
	if err != nil {
		return err
	}
	req.Header.Set("Title", title)
	req.Header.Set("Priority", "high")
	req.Header.Set("Tags", "lock")
	if p.Click != "" {
		req.Header.Set("Click", p.Click)
	}
	if p.Token != "" {
		req.Header.Set("Authorization", "Bearer "+p.Token)
	}
	c := p.Client
	if c == nil {
		c = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("ntfy push failed: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("ntfy push failed: HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return nil
}

var errNoPush = errors.New("no ntfy topic is configured (notify.ntfy in the config)")

// Test sends one push, as a held call would (loopguard notify --test).
func (p *Push) Test(ctx context.Context) error {
	if p == nil || p.URL == "" {
		return errNoPush
	}
	return p.Send(ctx, 1)
}
