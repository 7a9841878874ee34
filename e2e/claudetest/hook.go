package claudetest

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// HookArg is the first argument that makes a test binary act as a fake hook;
// see HookMain and Hook.
const HookArg = "claudetest-hook"

// maxHookInput bounds the payload the fake hook reads.
const maxHookInput = 16 << 20

// Hook is one handler in a settings.json matcher group.
type Hook struct {
	Type      string   `json:"type"`
	Command   string   `json:"command"`
	Args      []string `json:"args,omitempty"`
	Timeout   int      `json:"timeout,omitempty"`
	OnFailure string   `json:"onFailure,omitempty"`
}

// MatcherGroup is one matcher with its handlers.
type MatcherGroup struct {
	Matcher string `json:"matcher"`
	Hooks   []Hook `json:"hooks"`
}

// HooksJSON encodes event → matcher groups as the value of the "hooks" key.
func HooksJSON(events map[string][]MatcherGroup) string {
	b, err := json.Marshal(events)
	if err != nil {
		panic(err) // only strings and ints: cannot fail
	}
	return string(b)
}

// FakeHook returns an exec-form handler that runs exe (a binary whose main
// or TestMain calls HookMain when its first argument is HookArg) with the
// given fake-hook flags, e.g. "-record", dir, "-exit", "2".
func FakeHook(exe string, flags ...string) Hook {
	return Hook{Type: "command", Command: exe, Args: append([]string{HookArg}, flags...)}
}

// HookMain is the fake hook. It reads the payload from stdin and, by flags:
//
//	-record DIR   writes the payload to DIR/<event>-<tool>-<random>.json and
//	              start/end times (unix ns) to the same name with .times
//	-sleep D      sleeps D before answering
//	-stdout S     writes S to stdout
//	-stderr S     writes S to stderr
//	-exit N       exits with N (default 0)
//
// It returns the exit code.
func HookMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(HookArg, flag.ContinueOnError)
	fs.SetOutput(stderr)
	record := fs.String("record", "", "folder to record the payload in")
	sleep := fs.Duration("sleep", 0, "time to sleep before answering")
	out := fs.String("stdout", "", "text for stdout")
	errText := fs.String("stderr", "", "text for stderr")
	exit := fs.Int("exit", 0, "exit code")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	start := time.Now()
	payload, err := io.ReadAll(io.LimitReader(stdin, maxHookInput))
	if err != nil {
		fmt.Fprintf(stderr, "fake hook: failed to read stdin: %v\n", err)
		return 1
	}
	time.Sleep(*sleep)
	end := time.Now()
	if *record != "" {
		if err := recordPayload(*record, payload, start, end); err != nil {
			fmt.Fprintf(stderr, "fake hook: %v\n", err)
			return 1
		}
	}
	io.WriteString(stdout, *out)
	io.WriteString(stderr, *errText)
	return *exit
}

func recordPayload(dir string, payload []byte, start, end time.Time) error {
	var p struct {
		Event string `json:"hook_event_name"`
		Tool  string `json:"tool_name"`
	}
	_ = json.Unmarshal(payload, &p)
	f, err := os.CreateTemp(dir, fmt.Sprintf("%s-%s-*.json", safeName(p.Event), safeName(p.Tool)))
	if err != nil {
		return fmt.Errorf("failed to create record file: %w", err)
	}
	if _, err := f.Write(payload); err != nil {
		f.Close()
		return fmt.Errorf("failed to write record file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("failed to close record file: %w", err)
	}
	times := strconv.FormatInt(start.UnixNano(), 10) + " " + strconv.FormatInt(end.UnixNano(), 10) + "\n"
	name := f.Name()
	return os.WriteFile(name[:len(name)-len(filepath.Ext(name))]+".times", []byte(times), 0o644)
}

func safeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "none"
	}
	return string(b)
}

// Recorded is one payload written by the fake hook's -record flag.
type Recorded struct {
	File       string
	Event      string // hook_event_name
	Tool       string // tool_name
	Payload    json.RawMessage
	Start, End time.Time
}

// ReadRecorded reads every payload recorded in dir, in start-time order.
func ReadRecorded(dir string) ([]Recorded, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []Recorded
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("failed to read record: %w", err)
		}
		var p struct {
			Event string `json:"hook_event_name"`
			Tool  string `json:"tool_name"`
		}
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, fmt.Errorf("record %s is not JSON: %w", n, err)
		}
		r := Recorded{File: n, Event: p.Event, Tool: p.Tool, Payload: b}
		if tb, err := os.ReadFile(n[:len(n)-len(".json")] + ".times"); err == nil {
			var s, e int64
			if _, err := fmt.Sscan(string(tb), &s, &e); err == nil {
				r.Start, r.End = time.Unix(0, s), time.Unix(0, e)
			}
		}
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b Recorded) int { return a.Start.Compare(b.Start) })
	return out, nil
}
