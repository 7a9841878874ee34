//go:build unix

// Command spawn runs programs for the benchmark and reports, for each, its
// wall time, CPU time (user and system), exit code and peak RSS. It exists
// because of how Linux counts ru_maxrss: a child made with vfork (as Go's os/exec does) shares its
// parent's memory until exec, and the kernel folds the parent's peak RSS
// into the child's. A parent holding 100,000 grants in memory would hide the
// figure of every small program it runs. spawn stays small, and before each
// run resets its own peak to its current RSS (/proc/self/clear_refs), so a
// reported peak at or below spawn's own RSS (printed as "self") means "at
// most that much".
//
// Protocol: one JSON request per line on stdin, one JSON reply per line on
// stdout. hookbench starts it; it is not meant to be run by hand.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"runtime/debug"
	"syscall"
	"time"
)

type request struct {
	Path   string   `json:"path"`
	Args   []string `json:"args"`
	Env    []string `json:"env"`
	Dir    string   `json:"dir"`
	Stdin  string   `json:"stdin"`
	Stdout string   `json:"stdout"`
}

type reply struct {
	WallNS  int64 `json:"wall_ns"`
	MaxRSS  int64 `json:"max_rss"` // bytes, from wait4
	SelfRSS int64 `json:"self_rss"`
	// CPUNS is the child's user and system time (wait4's ru_utime and
	// ru_stime: every thread, and the children it waited for).
	CPUNS int64  `json:"cpu_ns"`
	Code  int    `json:"code"`
	Err   string `json:"err,omitempty"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 16<<20)
	out := json.NewEncoder(os.Stdout)
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		os.Exit(1)
	}
	for in.Scan() {
		var q request
		var r reply
		if err := json.Unmarshal(in.Bytes(), &q); err != nil {
			r.Err = err.Error()
		} else {
			r = run(q, null)
		}
		if err := out.Encode(r); err != nil {
			os.Exit(1)
		}
	}
}

func run(q request, null *os.File) reply {
	stdin, err := os.Open(q.Stdin)
	if err != nil {
		return reply{Err: err.Error()}
	}
	defer stdin.Close()
	stdout, err := os.OpenFile(q.Stdout, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return reply{Err: err.Error()}
	}
	defer stdout.Close()
	cmd := exec.Command(q.Path, q.Args...)
	cmd.Env, cmd.Dir = q.Env, q.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, null
	// Give freed memory back, then reset this process's peak RSS to its
	// current RSS (Linux 4.0+). Both happen before the clock starts.
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	self := selfRSS()
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return reply{Err: err.Error()}
	}
	werr := cmd.Wait()
	r := reply{WallNS: int64(time.Since(t0)), SelfRSS: self}
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		return reply{Err: werr.Error()}
	}
	r.Code = cmd.ProcessState.ExitCode()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.MaxRSS = ru.Maxrss * 1024 // kilobytes on Linux
	}
	r.CPUNS = int64(cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime())
	return r
}

// selfRSS is this process's peak RSS as the kernel reports it (VmHWM).
func selfRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	const key = "VmHWM:"
	for i := 0; i+len(key) < len(data); i++ {
		if string(data[i:i+len(key)]) != key || (i > 0 && data[i-1] != '\n') {
			continue
		}
		var kb int64
		for j := i + len(key); j < len(data) && data[j] != '\n'; j++ {
			if c := data[j]; c >= '0' && c <= '9' {
				kb = kb*10 + int64(c-'0')
			}
		}
		return kb * 1024
	}
	return 0
}
