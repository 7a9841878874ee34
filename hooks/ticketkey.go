package hooks

import "context"

// TicketKey is the key that MACs the tickets of two-phase enforcement
// (package ticket), from the master key the engine reads once.
func (e *Engine) TicketKey(ctx context.Context) ([]byte, error) {
	k, err := e.loadKeys(ctx)
	if err != nil {
		return nil, err
	}
	return k.TicketKey(), nil
}
