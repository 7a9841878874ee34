//go:build unix

package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/loopguard/loopguard/bench/budget"
)

type results struct {
	o          options
	cfgs       []*config
	peer       peerResult
	paths      []*pathResult
	start, end time.Time
	vault      bool // the Vault backend's rows were measured
	// loadStart and loadEnd are /proc/loadavg's first three fields.
	loadStart, loadEnd string
}

func loadavg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], ", ")
}

// Budget of issue 8.
const (
	budgetDeny   = 1.3
	budgetAllow  = 1.3
	budgetGrowth = 1.15
	budgetPeer   = 20.0
	budgetP99    = 50 * time.Millisecond
)

// Budgets of issue 39 (item 6) and issue 35.
const (
	// budgetFloor: the read-only and deny paths at most this times the Go
	// floor; an allowed call at most this times the Go floor plus the key
	// access it still makes (one keyring read: floorkeyring over floorgo).
	budgetFloor = 1.3
	// budgetNotSlower: today's median over the previous release's, in the
	// same interleaved rounds. Not slower, within what two medians of the
	// same binary differ by on this machine.
	budgetNotSlower = 1.05
)

// figures are the budgets of issues 39 and 35 for every measured path: the
// slowest state's median against the floor, and the empty state's against
// the previous release's hook (the -alt binary, when -alt-name names it).
func (r *results) figures() []budget.Figure {
	var out []budget.Figure
	for _, pr := range r.paths {
		p := pr.p
		fg, kr := pr.floorGo.stats(), pr.floorKR.stats()
		var wall, cpu time.Duration
		for i := range r.cfgs {
			s := pr.hook[i].stats()
			wall, cpu = max(wall, s.p50), max(cpu, s.cpu50)
		}
		states := "slowest state"
		if len(r.cfgs) == 1 {
			states = "empty state"
		}
		if !p.allow {
			x, xc := frac(wall, fg.p50), frac(cpu, fg.cpu50)
			out = append(out, budget.Figure{
				Issue: "39", Name: fmt.Sprintf("`%s`: loopguard-hook (%s) over the Go floor", p.name, states),
				Budget: fmt.Sprintf("≤ %.2fx", budgetFloor),
				Wall:   fmt.Sprintf("%.2fx (%s ms / %s ms)", x, ms(wall), ms(fg.p50)), Pass: x <= budgetFloor,
				CPU: fmt.Sprintf("%.2fx (%s ms / %s ms)", xc, ms(cpu), ms(fg.cpu50)), CPUPass: xc <= budgetFloor,
			})
		} else {
			// The key's access: one keyring read, the keyring floor over the Go floor.
			key, keyCPU := max(0, kr.p50-fg.p50), max(0, kr.cpu50-fg.cpu50)
			lim := time.Duration(budgetFloor*float64(fg.p50)) + key
			limCPU := time.Duration(budgetFloor*float64(fg.cpu50)) + keyCPU
			x, xc := frac(wall, lim), frac(cpu, limCPU)
			out = append(out, budget.Figure{
				Issue: "39", Name: fmt.Sprintf("`%s` (allowed): loopguard-hook (%s) over %.1fx the Go floor plus one keyring read", p.name, states, budgetFloor),
				Budget: fmt.Sprintf("≤ %.1f × Go floor + keyring read", budgetFloor),
				Wall:   fmt.Sprintf("%s ms against %s ms (%.1f × %s + %s): %.2fx", ms(wall), ms(lim), budgetFloor, ms(fg.p50), ms(key), x), Pass: x <= 1,
				CPU: fmt.Sprintf("%s ms against %s ms (%.1f × %s + %s): %.2fx", ms(cpu), ms(limCPU), budgetFloor, ms(fg.cpu50), ms(keyCPU), xc), CPUPass: xc <= 1,
			})
		}
		if r.o.alt != "" && r.o.altName != "" {
			h, a := pr.hook[0].stats(), pr.alt.stats()
			x, xc := frac(h.p50, a.p50), frac(h.cpu50, a.cpu50)
			out = append(out, budget.Figure{
				Issue: "35", Name: fmt.Sprintf("`%s`: loopguard-hook over the previous release's (%s), empty state, same rounds", p.name, r.o.altName),
				Budget: fmt.Sprintf("≤ %.2fx (not slower)", budgetNotSlower),
				Wall:   fmt.Sprintf("%.2fx (%s ms / %s ms)", x, ms(h.p50), ms(a.p50)), Pass: x <= budgetNotSlower,
				CPU: fmt.Sprintf("%.2fx (%s ms / %s ms)", xc, ms(h.cpu50), ms(a.cpu50)), CPUPass: xc <= budgetNotSlower,
			})
		}
	}
	return out
}

// frac is a / b, and +Inf when b is not positive (a figure with no floor
// cannot pass).
func frac(a, b time.Duration) float64 {
	if b <= 0 {
		return math.Inf(1)
	}
	return float64(a) / float64(b)
}

// denyBudgetPaths are the paths held to 1.3x the Go floor: the read-only
// abstention and the deny paths the budget names.
var denyBudgetPaths = map[string]bool{"read-only": true, "malformed": true, "no-grant": true, "chained": true}

func (r *results) markdown() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("## Run of %s UTC\n\n", r.start.UTC().Format("2006-01-02 15:04"))
	w("Command: `make bench` (its hookbench part took %s).\n\n", r.end.Sub(r.start).Round(time.Second))
	w("Machine:\n\n")
	for _, line := range machine(r.o) {
		w("- %s\n", line)
	}
	w("\nMethod: each call is a fresh process (fork/exec to reaped exit, timed around `os/exec` Start and Wait);\n")
	w("peak RSS is wait4's ru_maxrss. Per path, %d measured rounds (after %d warm-up rounds); each round runs\n", r.o.rounds, r.o.warmup)
	w("`/bin/true`, the Go floor, the keyring floor and loopguard-hook (the hook binary init registers) in each state once,\n")
	if r.o.alt != "" {
		w("and `%s hook` in the empty state, ", r.o.alt)
	}
	w("in an order that rotates every round; all built static (CGO_ENABLED=0), as make build builds loopguard;\n")
	if r.o.copied {
		w("every binary measured as a copy written with write(2) (-copy), as an archive unpacks it, not the file the linker wrote;\n")
	}
	if r.peer.err == nil {
		w("the peer cc-safety-net@%s (node %s, run as `node .../dist/bin/cc-safety-net.js hook --claude-code`) joins one round in %d.\n", r.peer.version, r.peer.nodeVersion, r.o.peerEvery)
	} else {
		w("the peer cc-safety-net could not be run: %v.\n", r.peer.err)
	}
	if r.vault {
		w("With the Vault backend (paths %s) loopguard-hook runs loopguard (exec), which runs against the pinned Vault dev server on loopback with an agent-policy token;\n", "`exact`, `scoped`, `no-grant`")
		w("the approvals and the scoped grant are minted by a userpass approver through Transit, the grant published in KV (bench/cmd/hookbench/vault.go).\n")
	}
	w("Every loopguard answer is checked (exit code and reason code); a wrong answer stops the run.\n")
	w("Programs are started by bench/cmd/spawn, a small process, because Linux folds the parent's peak RSS into a vforked\n")
	w("child's ru_maxrss; \"≤ x\" marks a peak not above spawn's own RSS, so the program's true peak is at most that.\n")
	w("Load average (1, 5, 15 min) at the start: %s; at the end: %s.\n\n", r.loadStart, r.loadEnd)

	w("| path | program | median ms | p90 ms | p99 ms | CPU median ms | peak RSS MB | vs floor | vs peer | vs empty state |\n")
	w("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, pr := range r.paths {
		p := pr.p
		floor := pr.floorGo.stats()
		if p.allow {
			floor = pr.floorKR.stats()
		}
		peer := pr.peer.stats()
		row := func(name string, s stats, vsFloor, vsPeer, vsEmpty string) {
			w("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", p.name, name, ms(s.p50), ms(s.p90), ms(s.p99), ms(s.cpu50), rssCell(s), vsFloor, vsPeer, vsEmpty)
		}
		row("/bin/true", pr.true_.stats(), "", "", "")
		row("floor: Go, decodes the stdin JSON, prints an allow", pr.floorGo.stats(), "", "", "")
		row("floor: Go + 1 keyring read", pr.floorKR.stats(), "", "", "")
		row("floor: Go, hook's packages linked", pr.floorLink.stats(), ratio(pr.floorLink.stats().p50, pr.floorGo.stats().p50), "", "")
		empty := pr.hook[0].stats()
		for i, c := range r.cfgs {
			s := pr.hook[i].stats()
			vsEmpty := ""
			if i > 0 {
				vsEmpty = ratio(s.p50, empty.p50)
			}
			row("**loopguard-hook**, "+c.name, s, ratio(s.p50, floor.p50), ratio(s.p50, peer.p50), vsEmpty)
		}
		if r.vault && vaultPaths[p.name] {
			s := pr.vault.stats()
			row("**loopguard-hook**, Vault backend (runs loopguard; dev server on loopback), empty state", s, ratio(s.p50, floor.p50), ratio(s.p50, peer.p50), "vs keyring: "+ratio(s.p50, empty.p50))
		}
		if r.o.alt != "" {
			s := pr.alt.stats()
			name := "alt: " + r.o.alt
			if r.o.altName != "" {
				name = "previous release: " + r.o.altName
			}
			if r.o.alt == r.o.full {
				name = "`loopguard hook` (the full binary: CLI, Vault client)"
			}
			row(name+", "+r.cfgs[0].name, s, ratio(s.p50, floor.p50), ratio(s.p50, peer.p50), "vs loopguard-hook: "+ratio(s.p50, empty.p50))
		}
		if r.peer.err == nil {
			row(fmt.Sprintf("cc-safety-net (answer: %s; n=%d)", pr.peerAnswer, peer.n), peer, "", "", "")
		}
	}
	w("\n\"vs floor\" divides by the Go floor for deny paths and by the keyring floor for allow paths (exact, scoped);\n")
	w("\"vs peer\" is loopguard's median over cc-safety-net's on the same payload (smaller is better).\n")
	w("\"floor: Go, hook's packages linked\" is the Go floor with the packages of loopguard's hook decision linked and\n")
	w("initialised, deciding nothing (bench/cmd/floorlinked); its \"vs floor\" is over the Go floor on every path.\n\n")

	w("Paths:\n\n")
	for _, pr := range r.paths {
		w("- `%s`: %s\n", pr.p.name, pr.p.what)
	}
	w("\n### Budgets (issue 39, item 6; issue 35, not slower)\n\n")
	w("The verdict is the wall time's; CPU time (user and system of the whole process) beside it.\n\n")
	for _, g := range r.figures() {
		cpu := ""
		if g.CPU != "" {
			cpu = fmt.Sprintf("; CPU %s %s", g.CPU, budget.Verdict(g.CPUPass))
		}
		w("- %s %s, budget %s: wall %s%s\n", budget.Verdict(g.Pass), g.Name, g.Budget, g.Wall, cpu)
	}
	w("\n### Budget (issue 8)\n\n")
	for _, line := range r.budget() {
		w("- %s\n", line)
	}
	return b.String()
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "**FAIL**"
}

func (r *results) budget() []string {
	var out []string
	for _, pr := range r.paths {
		p := pr.p
		floorGo, floorKR, peer := pr.floorGo.stats(), pr.floorKR.stats(), pr.peer.stats()
		var worst float64
		var figures []string
		if denyBudgetPaths[p.name] || p.allow {
			floor, limit, what := floorGo, budgetDeny, "Go floor"
			if p.allow {
				floor, limit, what = floorKR, budgetAllow, "keyring floor"
			}
			for i, c := range r.cfgs {
				x := float64(pr.hook[i].stats().p50) / float64(floor.p50)
				worst = max(worst, x)
				figures = append(figures, fmt.Sprintf("%.2fx at %s", x, count(c.grants)))
			}
			out = append(out, fmt.Sprintf("%s `%s` median at most %.2fx the %s: %s", verdict(worst <= limit), p.name, limit, what, strings.Join(figures, ", ")))
		}
		empty := pr.hook[0].stats().p50
		last := len(r.cfgs) - 1
		if last > 0 {
			big := pr.hook[last].stats().p50
			x := float64(big) / float64(empty)
			out = append(out, fmt.Sprintf("%s `%s` at %s within %.2fx of the empty state: %.2fx (%s ms vs %s ms)", verdict(x <= budgetGrowth), p.name, r.cfgs[last].name, budgetGrowth, x, ms(big), ms(empty)))
		}
		if r.peer.err == nil {
			var slowest time.Duration
			for i := range r.cfgs {
				slowest = max(slowest, pr.hook[i].stats().p50)
			}
			x := float64(peer.p50) / float64(slowest)
			out = append(out, fmt.Sprintf("%s `%s` at least %.0fx faster than cc-safety-net: %.1fx (slowest state %s ms vs %s ms)", verdict(x >= budgetPeer), p.name, budgetPeer, x, ms(slowest), ms(peer.p50)))
		} else {
			out = append(out, fmt.Sprintf("n/a `%s` vs cc-safety-net: the peer could not be run (%v)", p.name, r.peer.err))
		}
		var p99 time.Duration
		for i := range r.cfgs {
			p99 = max(p99, pr.hook[i].stats().p99)
		}
		out = append(out, fmt.Sprintf("%s `%s` p99 under %s in every state: worst %s ms", verdict(p99 < budgetP99), p.name, budgetP99, ms(p99)))
	}
	return out
}

// machine describes where the run happened.
func machine(o options) []string {
	var out []string
	cpu, mem := "", ""
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "MemTotal:") {
				mem = strings.TrimSpace(strings.TrimPrefix(sc.Text(), "MemTotal:"))
				break
			}
		}
		f.Close()
	}
	out = append(out, fmt.Sprintf("CPU: %s, %d logical cores; memory %s", cpu, runtime.NumCPU(), mem))
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	out = append(out, fmt.Sprintf("OS: %s, kernel %s, %s/%s", osName(), strings.TrimSpace(string(kernel)), runtime.GOOS, runtime.GOARCH))
	out = append(out, "Go: "+runtime.Version()+" (the benchmark binary; loopguard built by the same `make`)")
	if v := firstLine(o.full, "version"); v != "" {
		out = append(out, "loopguard: "+v)
	}
	if v := firstLine("gnome-keyring-daemon", "--version"); v != "" {
		out = append(out, "Secret Service: "+v+" (throwaway session from scripts/with-keyring)")
	}
	out = append(out, "State and audit log on: "+fsOf(o.work))
	return out
}

func osName() string {
	data, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return runtime.GOOS
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return runtime.GOOS
}

func firstLine(name string, args ...string) string {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}

// fsOf names the mount holding dir, from /proc/self/mounts (longest prefix).
func fsOf(dir string) string {
	data, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return dir
	}
	best, desc := "", dir
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) < 3 {
			continue
		}
		mp := f[1]
		if (dir == mp || strings.HasPrefix(dir, strings.TrimSuffix(mp, "/")+"/")) && len(mp) > len(best) {
			best, desc = mp, fmt.Sprintf("%s (%s on %s, mounted at %s)", dir, f[2], f[0], mp)
		}
	}
	return desc
}
