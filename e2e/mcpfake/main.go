// Command mcpfake is a tiny stdio MCP server for the real-client tests: a
// "bank" server with one tool, transfer {amount, to}, that appends a line to
// the ledger file named by $BANK_LEDGER. Claude Code sees the tool as
// mcp__bank__transfer.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// LedgerEnv names the environment variable holding the ledger file path.
const LedgerEnv = "BANK_LEDGER"

// maxLine bounds one JSON-RPC message.
const maxLine = 1 << 20

func main() {
	if err := serve(os.Stdin, os.Stdout, os.Getenv(LedgerEnv)); err != nil {
		fmt.Fprintf(os.Stderr, "mcpfake: %v\n", err)
		os.Exit(1)
	}
}

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

var transferTool = map[string]any{
	"name":        "transfer",
	"description": "Transfer money to an account.",
	"inputSchema": map[string]any{
		"type": "object",
		"properties": map[string]any{
			"amount": map[string]any{"type": "number", "description": "amount to send"},
			"to":     map[string]any{"type": "string", "description": "destination account"},
		},
		"required":             []string{"amount", "to"},
		"additionalProperties": false,
	},
}

// serve answers newline-delimited JSON-RPC requests from in until EOF.
func serve(in io.Reader, out io.Writer, ledger string) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	enc := json.NewEncoder(out)
	for sc.Scan() {
		var req request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			if err := enc.Encode(response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{-32700, "parse error"}}); err != nil {
				return err
			}
			continue
		}
		if len(req.ID) == 0 {
			continue // a notification
		}
		res := response{JSONRPC: "2.0", ID: req.ID}
		result, err := handle(req, ledger)
		if err != nil {
			var re *rpcError
			if !errors.As(err, &re) {
				re = &rpcError{-32603, err.Error()}
			}
			res.Error = re
		} else {
			res.Result = result
		}
		if err := enc.Encode(res); err != nil {
			return err
		}
	}
	return sc.Err()
}

func (e *rpcError) Error() string { return e.Message }

func handle(req request, ledger string) (any, error) {
	switch req.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(req.Params, &p)
		if p.ProtocolVersion == "" {
			p.ProtocolVersion = "2025-06-18"
		}
		return map[string]any{
			"protocolVersion": p.ProtocolVersion,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "bank", "version": "0.1.0"},
		}, nil
	case "ping":
		return map[string]any{}, nil
	case "tools/list":
		return map[string]any{"tools": []any{transferTool}}, nil
	case "tools/call":
		var p struct {
			Name      string `json:"name"`
			Arguments struct {
				Amount *float64 `json:"amount"`
				To     string   `json:"to"`
			} `json:"arguments"`
		}
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, &rpcError{-32602, "invalid params"}
		}
		if p.Name != "transfer" {
			return nil, &rpcError{-32602, "unknown tool " + p.Name}
		}
		if p.Arguments.Amount == nil || p.Arguments.To == "" {
			return toolText("transfer needs amount and to", true), nil
		}
		line := fmt.Sprintf("transfer %v to %s\n", *p.Arguments.Amount, p.Arguments.To)
		if err := appendLedger(ledger, line); err != nil {
			return toolText(err.Error(), true), nil
		}
		return toolText("sent "+line, false), nil
	default:
		return nil, &rpcError{-32601, "method not found: " + req.Method}
	}
}

func toolText(s string, isErr bool) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}, "isError": isErr}
}

func appendLedger(path, line string) error {
	if path == "" {
		return errors.New("no ledger: " + LedgerEnv + " is not set")
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("failed to open ledger: %w", err)
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return fmt.Errorf("failed to write ledger: %w", err)
	}
	return f.Close()
}
