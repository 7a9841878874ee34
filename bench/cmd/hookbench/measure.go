//go:build unix

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// pathResult holds every series measured for one path.
type pathResult struct {
	p          *benchPath
	true_      series
	floorGo    series
	floorKR    series
	floorLink  series
	hook       []series // one per config, in the order of results.cfgs
	alt        series   // options.alt in the empty state
	vault      series   // the Vault backend (vault.go), when measured
	peer       series
	peerAnswer string
}

// item is one program run once per round.
type item struct {
	name   string
	proc   proc
	into   *series
	check  func(sample) error
	before func() error
}

func exitZero(s sample) error {
	if s.code != 0 {
		return fmt.Errorf("exit code %d: %.300s", s.code, s.stdout)
	}
	return nil
}

// measure runs every program of path p once per round, in an order that
// rotates each round, so each program sees the machine in every position.
func measure(o options, r *runner, p *benchPath, cfgs []*config, truePath string, peer peerResult, vb *vaultBench) (*pathResult, error) {
	pr := &pathResult{p: p, hook: make([]series, len(cfgs))}
	env := os.Environ()
	base := proc{stdin: p.payload, dir: p.project, env: env}
	with := func(path string, args ...string) proc {
		q := base
		q.path, q.args = path, args
		return q
	}
	items := []item{
		{name: "true", proc: with(truePath), into: &pr.true_, check: exitZero},
		{name: "floor-go", proc: with(filepath.Join(o.binDir, "floorgo")), into: &pr.floorGo, check: exitZero},
		{name: "floor-keyring", proc: with(filepath.Join(o.binDir, "floorkeyring")), into: &pr.floorKR, check: exitZero},
		{name: "floor-linked", proc: with(filepath.Join(o.binDir, "floorlinked")), into: &pr.floorLink, check: exitZero},
	}
	for i, c := range cfgs {
		it := item{name: "loopguard " + c.name, proc: hookProc(o, p, c), into: &pr.hook[i], check: p.want.verify}
		if p.before != nil {
			c := c
			it.before = func() error { return p.before(c) }
		}
		items = append(items, it)
	}
	if o.alt != "" {
		q := hookProc(o, p, cfgs[0])
		q.path = o.alt
		it := item{name: "alt loopguard", proc: q, into: &pr.alt, check: p.want.verify}
		if p.before != nil {
			it.before = func() error { return p.before(cfgs[0]) }
		}
		items = append(items, it)
	}
	if it, ok := vb.item(o, p, &pr.vault); ok {
		items = append(items, it)
	}
	var peerItem *item
	if peer.err == nil {
		peerItem = &item{name: "cc-safety-net", proc: with(peer.node, peer.script, "hook", "--claude-code"), into: &pr.peer, check: exitZero}
		// Its first runs fill node's compile cache.
		for i := 0; i < 3; i++ {
			s, err := r.run(peerItem.proc)
			if err != nil {
				return nil, err
			}
			if i == 0 {
				pr.peerAnswer = peerAnswer(s.stdout)
			}
		}
	}
	for round := -o.warmup; round < o.rounds; round++ {
		k := len(items)
		order := make([]*item, 0, k+1)
		for i := 0; i < k; i++ {
			order = append(order, &items[(i+mod(round, k))%k])
		}
		if peerItem != nil && mod(round, o.peerEvery) == 0 {
			at := mod(round/o.peerEvery, len(order)+1)
			order = append(order[:at], append([]*item{peerItem}, order[at:]...)...)
		}
		for _, it := range order {
			if it.before != nil {
				if err := it.before(); err != nil {
					return nil, fmt.Errorf("%s: before the call: %w", it.name, err)
				}
			}
			s, err := r.run(it.proc)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", it.name, err)
			}
			if err := it.check(s); err != nil {
				return nil, fmt.Errorf("%s gave the wrong answer (round %d): %w", it.name, round, err)
			}
			if round >= 0 {
				it.into.add(s)
			}
		}
	}
	return pr, nil
}

func mod(a, b int) int { return ((a % b) + b) % b }

var decisionRE = regexp.MustCompile(`"(?:permissionDecision|behavior)":"(\w+)"`)

func peerAnswer(out []byte) string {
	if m := decisionRE.FindSubmatch(out); m != nil {
		return string(m[1])
	}
	if len(strings.TrimSpace(string(out))) == 0 {
		return "none (exit 0, no output)"
	}
	return "unrecognised output"
}

// peerResult says how to run the peer, or why it cannot be run.
type peerResult struct {
	node, script         string
	version, nodeVersion string
	err                  error
}

// installPeer installs cc-safety-net at exactly version into prefix with npm,
// unless it is there already, and finds its hook entry point.
func installPeer(prefix, version string) peerResult {
	node, err := exec.LookPath("node")
	if err != nil {
		return peerResult{err: errors.New("node not found on PATH (Debian: apt-get install nodejs npm)")}
	}
	res := peerResult{node: node}
	if out, err := exec.Command(node, "--version").Output(); err == nil {
		res.nodeVersion = strings.TrimSpace(string(out))
	}
	pkgDir := filepath.Join(prefix, "node_modules", "cc-safety-net")
	if installedVersion(pkgDir) != version {
		npm, err := exec.LookPath("npm")
		if err != nil {
			res.err = errors.New("npm not found on PATH (Debian: apt-get install npm)")
			return res
		}
		if err := os.MkdirAll(prefix, 0o755); err != nil {
			res.err = err
			return res
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "install", "--prefix", prefix, "--no-audit", "--no-fund", "--save-exact",
			"--ignore-scripts", "cc-safety-net@"+version)
		cmd.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(filepath.Dir(prefix), "npm-cache"))
		if out, err := cmd.CombinedOutput(); err != nil {
			res.err = fmt.Errorf("npm install cc-safety-net@%s failed: %v: %.600s", version, err, out)
			return res
		}
	}
	if v := installedVersion(pkgDir); v != version {
		res.err = fmt.Errorf("installed cc-safety-net is %q, want %s", v, version)
		return res
	}
	res.version = version
	res.script = filepath.Join(pkgDir, "dist", "bin", "cc-safety-net.js")
	if _, err := os.Stat(res.script); err != nil {
		res.err = fmt.Errorf("cc-safety-net@%s has no dist/bin/cc-safety-net.js: %w", version, err)
	}
	return res
}

func installedVersion(pkgDir string) string {
	data, err := os.ReadFile(filepath.Join(pkgDir, "package.json"))
	if err != nil {
		return ""
	}
	var m struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(data, &m) != nil {
		return ""
	}
	return m.Version
}
