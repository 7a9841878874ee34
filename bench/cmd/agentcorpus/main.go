// Command agentcorpus builds the corpus of shell commands coding agents
// really sent (testdata/agentcmds) from the session logs their users
// committed to public repositories, as testdata/agentcmds/sources.json
// lists them: the repository, the commit, the files (git pathspec globs)
// and how they are written. Every version of each file reachable from that
// commit is read, oldest first, so a log that was later truncated or
// deleted still counts, and each command keeps the first commit and path
// where it appears. Commands are kept byte for byte and deduplicated.
//
// It writes two corpora: -out holds the commands of the sources whose
// licence lets us redistribute them (committed, with NOTICE beside it);
// -full holds every source's (kept out of the repository). A source's
// repository is read from -repos DIR/OWNER+NAME (a bare clone; the
// snapshots `fetch` brings are laid out so), and cloned there from GitHub
// when absent, so a clean machine with git and the network rebuilds both:
//
//	go run ./bench/cmd/agentcorpus
//
// Run it again after editing sources.json; the output is deterministic.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/loopguard/loopguard/bench/corpus"
	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/shellparse"
)

// Source is one repository of sources.json.
type Source struct {
	// Repo is "github.com/OWNER/NAME".
	Repo string `json:"repo"`
	// Commit is the commit read (and everything before it).
	Commit string `json:"commit"`
	// License is the SPDX identifier of the repository's licence, "none"
	// when it has none.
	License string `json:"license"`
	// Redistribute is true when the licence lets us commit the commands
	// (with attribution in NOTICE).
	Redistribute bool `json:"redistribute"`
	// Copyright is the holder the licence names, for NOTICE.
	Copyright string `json:"copyright,omitempty"`
	Files     []File `json:"files"`
	Note      string `json:"note,omitempty"`
}

// File is a set of log files of one format.
type File struct {
	// Glob is a git pathspec glob (`:(glob)` magic): ** crosses dirs.
	Glob   string `json:"glob"`
	Format string `json:"format"`
}

type options struct {
	sources, repos, out, full, notice string
	clone                             bool
}

func main() {
	var o options
	flag.StringVar(&o.sources, "sources", "testdata/agentcmds/sources.json", "the sources to read")
	flag.StringVar(&o.repos, "repos", ".cache/agentcmds/repos", "directory of the sources' bare clones (OWNER+NAME, or OWNER+NAME/repo)")
	flag.StringVar(&o.out, "out", "testdata/agentcmds/corpus.jsonl", "corpus of the redistributable sources")
	flag.StringVar(&o.full, "full", ".cache/agentcmds/full.jsonl", "corpus of every source (not for the repository)")
	flag.StringVar(&o.notice, "notice", "testdata/agentcmds/NOTICE", "attribution of the redistributable sources")
	flag.BoolVar(&o.clone, "clone", true, "clone a missing repository from GitHub into -repos")
	flag.Parse()
	if err := run(o, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "agentcorpus: error:", err)
		os.Exit(1)
	}
}

func run(o options, log io.Writer) error {
	data, err := os.ReadFile(o.sources)
	if err != nil {
		return err
	}
	var sources []Source
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sources); err != nil {
		return fmt.Errorf("%s: %w", o.sources, err)
	}
	var all, shared []corpus.Entry
	for _, s := range sources {
		if err := s.check(); err != nil {
			return fmt.Errorf("%s: %w", o.sources, err)
		}
		gitDir, err := repoDir(o, s)
		if err != nil {
			return err
		}
		entries, err := read(gitDir, s, log)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Repo, err)
		}
		fmt.Fprintf(log, "%s: %d commands (%d distinct)\n", s.Repo, len(entries), len(corpus.Dedup(entries)))
		all = append(all, entries...)
		if s.Redistribute {
			shared = append(shared, entries...)
		}
	}
	all, shared = corpus.Dedup(all), corpus.Dedup(shared)
	fmt.Fprintf(log, "all sources: %d distinct commands; redistributable: %d\n", len(all), len(shared))
	if err := corpus.WriteFile(o.full, all); err != nil {
		return err
	}
	if err := corpus.WriteFile(o.out, shared); err != nil {
		return err
	}
	return fsx.WriteFile(o.notice, []byte(notice(sources, shared)), 0o644, false)
}

func (s Source) check() error {
	if !strings.HasPrefix(s.Repo, "github.com/") || strings.Count(s.Repo, "/") != 2 {
		return fmt.Errorf("repo %q: want github.com/OWNER/NAME", s.Repo)
	}
	if len(s.Commit) != 40 {
		return fmt.Errorf("%s: commit %q: want a full commit id", s.Repo, s.Commit)
	}
	if s.License == "" {
		return fmt.Errorf("%s: no license (say \"none\")", s.Repo)
	}
	if s.Redistribute && (!strings.HasPrefix(s.License, "MIT") || s.Copyright == "") {
		// NOTICE carries the MIT permission notice; another licence
		// needs its own terms there first.
		return fmt.Errorf("%s: only MIT sources with a copyright holder are redistributed", s.Repo)
	}
	for _, f := range s.Files {
		switch f.Format {
		case corpus.FormatJSON, corpus.FormatSpecStory, corpus.FormatMarkdownJSON:
		default:
			return fmt.Errorf("%s: unknown format %q", s.Repo, f.Format)
		}
	}
	return nil
}

// repoDir finds, or clones, the bare repository of s.
func repoDir(o options, s Source) (string, error) {
	name := strings.Replace(strings.TrimPrefix(s.Repo, "github.com/"), "/", "+", 1)
	for _, d := range []string{filepath.Join(o.repos, name, "repo"), filepath.Join(o.repos, name)} {
		if _, err := git(d, "cat-file", "-e", s.Commit+"^{commit}"); err == nil {
			return d, nil
		}
	}
	if !o.clone {
		return "", fmt.Errorf("%s: no clone with commit %s under %s", s.Repo, s.Commit, o.repos)
	}
	d := filepath.Join(o.repos, name)
	if err := os.MkdirAll(o.repos, 0o755); err != nil {
		return "", err
	}
	if _, err := os.Stat(d); errors.Is(err, os.ErrNotExist) {
		cmd := exec.Command("git", "clone", "--bare", "--quiet", "https://"+s.Repo+".git", d)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("clone %s: %w", s.Repo, err)
		}
	}
	if _, err := git(d, "cat-file", "-e", s.Commit+"^{commit}"); err != nil {
		return "", fmt.Errorf("%s: commit %s is not in the clone (rewritten history?)", s.Repo, s.Commit)
	}
	return d, nil
}

func git(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"--git-dir=" + dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// read extracts the commands of every version of s's files, oldest first.
func read(dir string, s Source, log io.Writer) ([]corpus.Entry, error) {
	var out []corpus.Entry
	seen := map[string]bool{} // blob ids already read
	for _, f := range s.Files {
		versions, err := history(dir, s.Commit, f.Glob)
		if err != nil {
			// A snapshot can lack old trees: read the history up to them.
			fmt.Fprintf(log, "%s: %s: history read in part: %v\n", s.Repo, f.Glob, err)
		}
		unreadable := 0
		for _, v := range versions {
			commit, line := v[0], v[1]
			blob, err := git(dir, "rev-parse", commit+":"+line)
			if err != nil {
				unreadable++
				continue
			}
			id := string(bytes.TrimSpace(blob))
			if seen[id] {
				continue
			}
			seen[id] = true
			data, err := git(dir, "cat-file", "blob", id)
			if err != nil {
				// A snapshot can lack an object (a file of 4 MiB or more).
				unreadable++
				continue
			}
			for _, fd := range corpus.Extract(f.Format, data) {
				out = append(out, corpus.Entry{Cmd: fd.Cmd, Agent: fd.Agent, Source: s.Repo, Path: line, Commit: commit,
					License: s.License, Format: f.Format, Cwd: fd.Cwd, Shell: fd.Shell, Shape: shellparse.Shape(fd.Cmd)})
			}
		}
		if unreadable > 0 {
			fmt.Fprintf(log, "%s: %s: %d file versions could not be read\n", s.Repo, f.Glob, unreadable)
		}
	}
	return out, nil
}

// history lists (commit, path) of every version of the files glob
// matches that commit reaches, oldest first. When git stops at a missing
// object it returns what it read before, newest first as git walks, with
// the error.
func history(dir, commit, glob string) ([][2]string, error) {
	cmd := exec.Command("git", "--git-dir="+dir, "log", "--format=%H", "--name-only", "--diff-filter=AM", commit, "--", ":(glob)"+glob)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	list, err := cmd.Output()
	if err != nil {
		err = fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var blocks [][][2]string
	cur := ""
	sc := bufio.NewScanner(bytes.NewReader(list))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
		case len(line) == 40 && strings.Trim(line, "0123456789abcdef") == "":
			cur = line
			blocks = append(blocks, nil)
		case cur != "":
			blocks[len(blocks)-1] = append(blocks[len(blocks)-1], [2]string{cur, line})
		}
	}
	var out [][2]string
	for i := len(blocks) - 1; i >= 0; i-- {
		out = append(out, blocks[i]...)
	}
	return out, err
}

// notice attributes each redistributed source that gave a command, and
// carries the permission notice of the MIT licence they are under.
func notice(sources []Source, shared []corpus.Entry) string {
	count := map[string]int{}
	for _, e := range shared {
		count[e.Source]++
	}
	var b strings.Builder
	b.WriteString("The commands in corpus.jsonl were taken from session logs committed to the\n")
	b.WriteString("public repositories below, under their licences. Each line of corpus.jsonl\n")
	b.WriteString("names its repository, commit, path and licence. The commands are the\n")
	b.WriteString("agents' own text, unchanged; no other part of the logs is included.\n\n")
	var names []string
	bySource := map[string]Source{}
	for _, s := range sources {
		if s.Redistribute && count[s.Repo] > 0 {
			names = append(names, s.Repo)
			bySource[s.Repo] = s
		}
	}
	sort.Strings(names)
	for _, n := range names {
		s := bySource[n]
		fmt.Fprintf(&b, "https://%s (commit %s)\n  %d commands. %s licence: Copyright (c) %s.\n\n", n, s.Commit, count[n], s.License, s.Copyright)
	}
	b.WriteString(mitNotice)
	return b.String()
}

// mitNotice is the MIT licence's permission notice, which each copyright
// line above is given with.
const mitNotice = `The MIT License, for each repository above:

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
`
