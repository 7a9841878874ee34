package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/bench/corpus"
)

// gitRepo makes a bare repository OWNER+NAME under repos from a work tree
// where each step writes files and commits; it returns the commit ids.
func gitRepo(t *testing.T, repos, name string, steps []map[string]string) []string {
	t.Helper()
	work := t.TempDir()
	run := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run(work, "init", "-q")
	var commits []string
	for i, files := range steps {
		for p, content := range files {
			full := filepath.Join(work, p)
			if content == "" {
				run(work, "rm", "-q", p)
				continue
			}
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			run(work, "add", p)
		}
		run(work, "commit", "-q", "-m", "step "+string(rune('0'+i)))
		commits = append(commits, run(work, "rev-parse", "HEAD"))
	}
	run(work, "clone", "-q", "--bare", work, filepath.Join(repos, name))
	return commits
}

func hook(cmds ...string) string {
	var b strings.Builder
	b.WriteString("[")
	for i, c := range cmds {
		if i > 0 {
			b.WriteString(",")
		}
		in, _ := json.Marshal(map[string]any{"tool_name": "Bash", "cwd": "/w", "tool_input": map[string]string{"command": c}})
		b.Write(in)
	}
	b.WriteString("]")
	return b.String()
}

// TestBuild: every version of a log counts (a command later truncated
// away is kept, with the commit it first appeared in), commands are
// deduplicated across sources, an unlicensed source stays out of the
// shared corpus and NOTICE, and a source that would redistribute without
// the MIT terms is refused.
func TestBuild(t *testing.T) {
	dir := t.TempDir()
	repos := filepath.Join(dir, "repos")
	a := gitRepo(t, repos, "o+a", []map[string]string{
		{"logs/pre_tool_use.json": hook("git status", "rm -rf build")},
		{"logs/pre_tool_use.json": hook("npm test")}, // truncated: the first two live on in history
		{"logs/pre_tool_use.json": "", "README": "x"},
	})
	b := gitRepo(t, repos, "o+b", []map[string]string{
		{"docs/s.jsonl": `{"type":"assistant","cwd":"/b","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"git status"}},{"type":"tool_use","name":"Bash","input":{"command":"make\n"}}]}}` + "\n"},
	})
	sources := []Source{
		{Repo: "github.com/o/a", Commit: a[2], License: "MIT", Redistribute: true, Copyright: "2026 A", Files: []File{{Glob: "**/logs/*.json", Format: corpus.FormatJSON}}},
		{Repo: "github.com/o/b", Commit: b[0], License: "none", Files: []File{{Glob: "**/*.jsonl", Format: corpus.FormatJSON}}},
	}
	data, _ := json.Marshal(sources)
	o := options{sources: filepath.Join(dir, "sources.json"), repos: repos, out: filepath.Join(dir, "out", "corpus.jsonl"),
		full: filepath.Join(dir, "full", "full.jsonl"), notice: filepath.Join(dir, "out", "NOTICE")}
	if err := os.WriteFile(o.sources, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(o, io.Discard); err != nil {
		t.Fatal(err)
	}
	read := func(p string) []corpus.Entry {
		es, err := corpus.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return es
	}
	shared, full := read(o.out), read(o.full)
	var got []string
	for _, e := range shared {
		got = append(got, e.Cmd+"@"+e.Commit[:7])
		if e.Source != "github.com/o/a" || e.License != "MIT" || e.Path != "logs/pre_tool_use.json" || e.Cwd != "/w" || e.Agent != "claude-code" {
			t.Errorf("provenance: %+v", e)
		}
	}
	want := []string{"git status@" + a[0][:7], "rm -rf build@" + a[0][:7], "npm test@" + a[1][:7]}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("shared: %q, want %q", got, want)
	}
	if len(full) != 4 || full[3].Cmd != "make\n" || full[3].Source != "github.com/o/b" {
		t.Errorf("full: %+v", full)
	}
	notice, err := os.ReadFile(o.notice)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(notice), "https://github.com/o/a") || strings.Contains(string(notice), "o/b") ||
		!strings.Contains(string(notice), "Copyright (c) 2026 A") || !strings.Contains(string(notice), "Permission is hereby granted") {
		t.Errorf("NOTICE:\n%s", notice)
	}

	// Redistributing an unlicensed or non-MIT source is refused.
	for _, bad := range []Source{
		{Repo: "github.com/o/b", Commit: b[0], License: "none", Redistribute: true, Copyright: "x"},
		{Repo: "github.com/o/b", Commit: b[0], License: "Apache-2.0", Redistribute: true, Copyright: "x"},
		{Repo: "github.com/o/b", Commit: b[0][:7], License: "none"},
		{Repo: "o/b", Commit: b[0], License: "none"},
	} {
		if err := bad.check(); err == nil {
			t.Errorf("check(%+v): no error", bad)
		}
	}
}
