//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"
)

// proc is one program the benchmark runs as a fresh process per call.
type proc struct {
	path  string
	args  []string
	env   []string
	stdin string // file fed on stdin
	dir   string // working directory (the project, as Claude Code runs hooks)
}

// sample is one run: wall time from fork to reaped exit, and the peak
// resident set size the kernel reports for the child (wait4's ru_maxrss).
type sample struct {
	wall   time.Duration
	cpu    time.Duration // user and system time of the child (wait4)
	maxRSS int64         // bytes
	// selfRSS is spawn's own RSS at the run: a maxRSS at or below it only
	// says "at most selfRSS".
	selfRSS int64
	code    int
	stdout  []byte
}

// runner runs programs through bench/cmd/spawn, a small process of its own,
// so that the peak RSS wait4 reports is the program's and not hookbench's
// (see spawn's doc comment). Every program's output goes to one file, read
// back after the run.
type runner struct {
	cmd  *exec.Cmd
	req  *json.Encoder
	resp *bufio.Scanner
	out  string
}

func newRunner(spawn, dir string) (*runner, error) {
	cmd := exec.Command(spawn)
	cmd.Stderr = os.Stderr
	w, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	rd, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", spawn, err)
	}
	return &runner{cmd: cmd, req: json.NewEncoder(w), resp: bufio.NewScanner(rd), out: filepath.Join(dir, "stdout")}, nil
}

type spawnReply struct {
	WallNS  int64  `json:"wall_ns"`
	MaxRSS  int64  `json:"max_rss"`
	SelfRSS int64  `json:"self_rss"`
	CPUNS   int64  `json:"cpu_ns"`
	Code    int    `json:"code"`
	Err     string `json:"err"`
}

// run runs p once. spawn times only the span from Start to the end of Wait.
func (r *runner) run(p proc) (sample, error) {
	q := map[string]any{"path": p.path, "args": p.args, "env": p.env, "dir": p.dir, "stdin": p.stdin, "stdout": r.out}
	if err := r.req.Encode(q); err != nil {
		return sample{}, err
	}
	if !r.resp.Scan() {
		return sample{}, fmt.Errorf("spawn stopped: %v", r.resp.Err())
	}
	var rep spawnReply
	if err := json.Unmarshal(r.resp.Bytes(), &rep); err != nil {
		return sample{}, err
	}
	if rep.Err != "" {
		return sample{}, fmt.Errorf("run %s: %s", p.path, rep.Err)
	}
	s := sample{wall: time.Duration(rep.WallNS), cpu: time.Duration(rep.CPUNS), maxRSS: rep.MaxRSS, selfRSS: rep.SelfRSS, code: rep.Code}
	f, err := os.Open(r.out)
	if err != nil {
		return sample{}, err
	}
	defer f.Close()
	s.stdout, err = io.ReadAll(io.LimitReader(f, 1<<20))
	return s, err
}

// series collects the samples of one program on one path.
type series struct {
	walls []time.Duration
	cpus  []time.Duration
	rss   []int64
	self  int64
}

func (s *series) add(x sample) {
	s.walls = append(s.walls, x.wall)
	s.cpus = append(s.cpus, x.cpu)
	s.rss = append(s.rss, x.maxRSS)
	s.self = max(s.self, x.selfRSS)
}

// stats summarises a series: nearest-rank percentiles of wall time, and the
// largest peak RSS seen.
type stats struct {
	n             int
	p50, p90, p99 time.Duration
	// cpu50 is the median CPU time (user and system).
	cpu50    time.Duration
	min, max time.Duration
	peakRSS  int64
	// rssBound is set when peakRSS is not above spawn's own RSS, so the
	// program's real peak is at most peakRSS.
	rssBound bool
}

func (s *series) stats() stats {
	if len(s.walls) == 0 {
		return stats{}
	}
	w := slices.Clone(s.walls)
	slices.Sort(w)
	rank := func(p float64) time.Duration { return nearestRank(w, p) }
	c := slices.Clone(s.cpus)
	slices.Sort(c)
	return stats{n: len(w), p50: rank(50), p90: rank(90), p99: rank(99), min: w[0], max: w[len(w)-1], cpu50: nearestRank(c, 50), peakRSS: slices.Max(s.rss), rssBound: slices.Max(s.rss) <= s.self}
}

// nearestRank is the p-th percentile of sorted, by nearest rank (0 when
// sorted is empty).
func nearestRank(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// check tells whether a run of the hook gave the decision the path expects.
type check struct {
	code     int
	contains []string
	empty    bool   // no output at all (an abstention)
	session  string // the payload's session, for the grants the path needs
}

func (c check) verify(s sample) error {
	if s.code != c.code {
		return fmt.Errorf("exit code %d, want %d; output: %.400s", s.code, c.code, s.stdout)
	}
	for _, want := range c.contains {
		if !bytes.Contains(s.stdout, []byte(want)) {
			return fmt.Errorf("output lacks %q: %.400s", want, s.stdout)
		}
	}
	if c.empty && len(bytes.TrimSpace(s.stdout)) > 0 {
		return fmt.Errorf("output %.400q, want none (an abstention)", s.stdout)
	}
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

func ratio(a, b time.Duration) string {
	if a <= 0 || b <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2fx", float64(a)/float64(b))
}

func mb(b int64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }

func rssCell(s stats) string {
	if s.rssBound {
		return "≤ " + mb(s.peakRSS)
	}
	return mb(s.peakRSS)
}
