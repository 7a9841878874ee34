// Package ntfystub serves ntfy's documented publish API on loopback, for
// the tests of loopguard serve's push: the ntfy server's Go module is not
// on the Go module proxy here, so the tests run its API, not its code. A
// POST or PUT of the message to /<topic>, with the Title, Priority, Tags,
// Click and Authorization headers, is kept and answered with the message
// as JSON, as ntfy answers it.
package ntfystub

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Server is the stub; use it as an http.Handler (httptest.NewServer).
type Server struct {
	mu   sync.Mutex
	msgs []Message
}

// Message is one push as it arrived.
type Message struct {
	Topic   string
	Message string
	Title   string
	Click   string
	Header  http.Header
}

// Text is everything the push carried but its Authorization: what a
// server that is not the user's sees.
func (m Message) Text() string {
	s := m.Message + "\n" + m.Title
	for k, vs := range m.Header {
		if k != "Authorization" {
			s += "\n" + k + ": " + strings.Join(vs, ",")
		}
	}
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost && r.Method != http.MethodPut {
		http.Error(w, `{"code":40501,"http":405,"error":"method not allowed"}`, http.StatusMethodNotAllowed)
		return
	}
	topic := strings.TrimPrefix(r.URL.Path, "/")
	if topic == "" || strings.Contains(topic, "/") {
		http.Error(w, `{"code":40010,"http":400,"error":"invalid topic"}`, http.StatusBadRequest)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 4096))
	m := Message{Topic: topic, Message: string(body), Title: r.Header.Get("Title"), Click: r.Header.Get("Click"), Header: r.Header.Clone()}
	s.mu.Lock()
	s.msgs = append(s.msgs, m)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"id": "x1", "time": time.Now().Unix(), "event": "message", "topic": topic, "message": m.Message})
}

// Messages returns the pushes received so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}
