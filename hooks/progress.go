package hooks

import "sync"

// Progress is what one hook run has done so far, shared by the engine and
// the run's deadline (agents.Run), which may answer before the engine
// does: then the engine's decision reaches nobody, and what the model was
// told is the deadline's deny. The deadline records that answer (audit
// log, pending record); the engine, finding the run answered, writes no
// entry of its own for a decision nobody received, and corrects a pending
// record it makes after the deadline.
type Progress struct {
	mu       sync.Mutex
	call     *Call
	pending  string
	answered *Decision
}

// SetCall notes the decoded call.
func (p *Progress) SetCall(c *Call) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.call = c
	p.mu.Unlock()
}

// Call returns the decoded call, nil before it is decoded.
func (p *Progress) Call() *Call {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.call
}

// Answer notes that d was the run's answer (its deadline), and returns
// the call and the pending record made so far ("" when none).
func (p *Progress) Answer(d Decision) (*Call, string) {
	if p == nil {
		return nil, ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answered = &d
	return p.call, p.pending
}

// Answered reports whether the run already answered without the engine.
func (p *Progress) Answered() bool { return p.answeredBy() != nil }

// answeredBy returns the run's answer when it was given without the
// engine (its deadline), or nil.
func (p *Progress) answeredBy() *Decision {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.answered
}

// notePending notes the pending record made for the call, and returns the
// run's answer if it was already given without the engine.
func (p *Progress) notePending(id string) *Decision {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending = id
	return p.answered
}
