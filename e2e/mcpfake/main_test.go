package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func rpc(t *testing.T, ledger string, lines ...string) []response {
	t.Helper()
	var out bytes.Buffer
	if err := serve(strings.NewReader(strings.Join(lines, "\n")+"\n"), &out, ledger); err != nil {
		t.Fatal(err)
	}
	var res []response
	dec := json.NewDecoder(&out)
	for dec.More() {
		var r response
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		res = append(res, r)
	}
	return res
}

func TestServe(t *testing.T) {
	ledger := filepath.Join(t.TempDir(), "ledger")
	res := rpc(t, ledger,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"transfer","arguments":{"amount":5,"to":"bob"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"transfer","arguments":{"to":"bob"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"nope"}`,
	)
	if len(res) != 5 {
		t.Fatalf("got %d responses, want 5 (the notification gets none)", len(res))
	}
	for i, r := range res[:4] {
		if r.Error != nil {
			t.Errorf("response %d: error %v", i, r.Error)
		}
	}
	if res[4].Error == nil || res[4].Error.Code != -32601 {
		t.Errorf("unknown method: %+v, want -32601", res[4])
	}
	b, err := os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "transfer 5 to bob\n" {
		t.Errorf("ledger = %q; want one transfer (the call without amount must not write)", b)
	}
	if m := res[3].Result.(map[string]any); m["isError"] != true {
		t.Errorf("call without amount: %v, want isError", m)
	}
}
