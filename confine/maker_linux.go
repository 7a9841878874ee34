//go:build linux

package confine

import (
	"fmt"
	"runtime"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The maker. With the filter alone, the first stage reads a call's path
// from the program's memory and judges its last name, and the kernel then
// reads the path again: a second thread of the program that rewrites it
// between the two reads (src/Xgit to src/.git) got the protected name made
// wherever Landlock let the program make names (attack runs won in 0 to
// 1,282 tries). So the program gets no right to make a name in the
// project (makeRights, cut from its ruleset: buildWithMaker), and every
// name there is made by the first stage from the path it read and judged
// itself, relative to the directory it resolved: never the kernel's
// second reading. Where the program could make a name is still
// Landlock's to say, by the program's own rules: the maker is a thread of
// the first stage restricted by them (the rules that grant a right to
// make a name, built from the same descriptors as the program's), which
// makes the name with the program's
// umask (its own, since the thread does not share the launcher's
// filesystem attributes). What it made is the program's as if its own
// call had made it: a descriptor handed over (ADDFD), or the call's
// result. With namespaces of its own the second stage runs such a broker
// too (stage2), which serves no directory itself: every name in the
// project, the top's included, is judged and made by the maker there,
// under the second stage's mounts.

// makeRights are the rights to make a name: a program that has none in
// the project makes none there but through the maker. A socket is left
// to the program (a test's server binds one in tmp/): no program reads
// configuration from one, and the sweep moves one under a protected name
// out after the call.
const makeRights = llsys.AccessFSMakeChar | llsys.AccessFSMakeDir | llsys.AccessFSMakeReg | llsys.AccessFSMakeFifo |
	llsys.AccessFSMakeBlock | llsys.AccessFSMakeSym

// makerRights are the rights the program has in the project only through
// the maker: to make a name, and to write or truncate a file. A file of
// the project may have a second name outside it: pnpm's node_modules are
// hard links into its store, which every other project links too (the
// nineteenth attack run wrote one, and changed the store's file). The
// kernel reads a path again after the broker judged it, so only a file
// the broker opened itself and looked at can be told to have one name
// (writeExisting); the program opens none for writing there itself.
const makerRights = makeRights | llsys.AccessFSWriteFile | llsys.AccessFSTruncate

// maker runs what the first stage asks on a thread of its own, restricted
// by the maker's ruleset.
type maker struct {
	reqs chan func()
	done chan struct{}
	ret  chan struct{}
}

// startMaker starts the maker's thread, restricted by the ruleset rules
// (ruleset.buildWithMaker).
func startMaker(rules int) (*maker, error) {
	m := &maker{reqs: make(chan func()), done: make(chan struct{}), ret: make(chan struct{})}
	errc := make(chan error, 1)
	go func() {
		defer close(m.done)
		// Never unlocked: the thread ends with this goroutine, its
		// Landlock domain and umask with it, and the Go runtime starts no
		// thread from a locked one (it clones its template thread).
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_FS); err != nil {
			errc <- fmt.Errorf("unshare(CLONE_FS): %w", err)
			return
		}
		if err := confineThread(rules); err != nil {
			errc <- err
			return
		}
		errc <- nil
		for f := range m.reqs {
			f()
			m.ret <- struct{}{}
		}
	}()
	if err := <-errc; err != nil {
		<-m.done
		return nil, err
	}
	return m, nil
}

// confineThread restricts the calling thread, locked to its goroutine
// for good, by the ruleset rules, with no capability the program lacks
// (the second stage's threads keep their namespace's): this thread's,
// all of them.
func confineThread(rules int) error {
	var none [2]unix.CapUserData
	if err := unix.Capset(&unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}, &none[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return restrictTo(rules)
}

// do runs f on the maker's thread with the umask mask (-1: as it is).
func (m *maker) do(mask int, f func() error) error {
	var err error
	m.reqs <- func() {
		if mask >= 0 {
			unix.Umask(mask)
		}
		err = f()
	}
	<-m.ret
	return err
}

// stop ends the maker's thread.
func (m *maker) stop() {
	close(m.reqs)
	<-m.done
}
