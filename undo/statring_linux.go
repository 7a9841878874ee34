//go:build linux

package undo

import (
	"errors"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A statRing looks at a directory's entries many at a time: one
// io_uring_enter submits a statx of each name (from the directory's
// descriptor, not following a link) and waits for them all. A record's
// cost is its system calls: with kernel page-table isolation each entry
// into the kernel costs about what the fstatat in it does, and a project
// of 10,000 files was 10,000 of them (measured in docs/undo.md: the
// ring's statx cost 40% of fstatat's CPU). The answers are the same
// fields fstatat gives (statAt is the reference, and stands in where the
// ring is refused: an older kernel, a seccomp filter, io_uring_disabled):
// an entry whose statx failed for any reason but ENOENT, or came back
// without a field, is looked at again with fstatat.
type statRing struct {
	fd       int
	sq, sqes []byte // the mappings: the submission ring (and completions) and its entries
	cq       []byte // the completion ring, when the kernel maps it apart
	sqHead   *uint32
	sqTail   *uint32
	sqMask   uint32
	sqArray  []uint32
	cqHead   *uint32
	cqTail   *uint32
	cqMask   uint32
	cqes     unsafe.Pointer
	entries  int
	// names and bufs are what the kernel reads and writes for the
	// entries in flight; kept here until every one has completed.
	names []byte
	bufs  []unix.Statx_t
	seen  []bool
	// fellBack counts the entries looked at again with fstatat.
	fellBack int
}

// ringEntries is how many statx are in flight at once.
const ringEntries = 256

// io_uring's ABI (include/uapi/linux/io_uring.h).
const (
	ioringOffSQRing     = 0
	ioringOffCQRing     = 0x8000000
	ioringOffSQEs       = 0x10000000
	ioringFeatSingleMap = 1 << 0
	ioringEnterGetevent = 1 << 0
	ioringOpStatx       = 21
	sqeSize             = 64
	cqeSize             = 16
)

type uringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  [10]uint32 // head, tail, ring_mask, ring_entries, flags, dropped, array, resv1, user_addr (2)
	cqOff                                                                  [10]uint32 // head, tail, ring_mask, ring_entries, overflow, cqes, flags, resv1, user_addr (2)
}

type uringSQE struct {
	opcode, flags uint8
	ioprio        uint16
	fd            int32
	addr2         uint64 // off
	addr          uint64
	len           uint32
	opFlags       uint32 // statx_flags
	userData      uint64
	pad           [3]uint64
}

// statWant are the fields a record reads; a statx that does not give
// them all is done again with fstatat.
const statWant = unix.STATX_TYPE | unix.STATX_MODE | unix.STATX_NLINK | unix.STATX_INO | unix.STATX_SIZE | unix.STATX_MTIME | unix.STATX_CTIME

// noRing: records look at entries one fstatat at a time (a test shows
// both giving the same record).
var noRing bool

// abandoned keeps what a ring that failed with entries in flight may
// still write: never freed, never reused.
var abandoned [][]unix.Statx_t

// newStatRing is a ring, or nil where the kernel refuses one.
func newStatRing() *statRing {
	if noRing {
		return nil
	}
	var p uringParams
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, ringEntries, uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		return nil
	}
	r := &statRing{fd: int(fd), entries: int(p.sqEntries)}
	sqSize := int(p.sqOff[6]) + int(p.sqEntries)*4
	cqSize := int(p.cqOff[5]) + int(p.cqEntries)*cqeSize
	single := p.features&ioringFeatSingleMap != 0
	if single {
		sqSize = max(sqSize, cqSize)
	}
	var err error
	if r.sq, err = unix.Mmap(r.fd, ioringOffSQRing, sqSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		r.close()
		return nil
	}
	cq := r.sq
	if !single {
		if r.cq, err = unix.Mmap(r.fd, ioringOffCQRing, cqSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
			r.close()
			return nil
		}
		cq = r.cq
	}
	if r.sqes, err = unix.Mmap(r.fd, ioringOffSQEs, int(p.sqEntries)*sqeSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		r.close()
		return nil
	}
	u32 := func(b []byte, off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&b[off])) }
	r.sqHead, r.sqTail, r.sqMask = u32(r.sq, p.sqOff[0]), u32(r.sq, p.sqOff[1]), *u32(r.sq, p.sqOff[2])
	r.sqArray = unsafe.Slice(u32(r.sq, p.sqOff[6]), p.sqEntries)
	r.cqHead, r.cqTail, r.cqMask = u32(cq, p.cqOff[0]), u32(cq, p.cqOff[1]), *u32(cq, p.cqOff[2])
	r.cqes = unsafe.Pointer(&cq[p.cqOff[5]])
	r.bufs = make([]unix.Statx_t, r.entries)
	return r
}

func (r *statRing) close() {
	if r == nil {
		return
	}
	for _, m := range [][]byte{r.sqes, r.cq, r.sq} {
		if m != nil {
			_ = unix.Munmap(m)
		}
	}
	r.sq, r.cq, r.sqes = nil, nil, nil
	if r.fd >= 0 {
		_ = unix.Close(r.fd)
		r.fd = -1
	}
}

// fileStat is what a record reads of an entry.
type fileStat struct {
	mode         uint32 // type and permission bits
	nlink        uint64
	size         int64
	mtime, ctime int64 // ns
	dev, ino     uint64
}

// stat looks at each name in dirfd (not following a link) into sts, and
// errs[i] is names[i]'s error (ENOENT: gone). Where the ring fails it is
// closed, and the rest is looked at with fstatat. A nil ring is fstatat
// alone. meanwhile (nil: nothing) is called once, while the kernel's
// thread runs the first batch's statx where there is a ring.
func (r *statRing) stat(dirfd int, names []string, sts []fileStat, errs []error, meanwhile func()) {
	called := false
	once := func() {
		if !called && meanwhile != nil {
			meanwhile()
		}
		called = true
	}
	done := 0
	for r != nil && r.fd >= 0 && done < len(names) {
		n := min(len(names)-done, r.entries)
		m := once
		if done > 0 {
			m = nil
		}
		if !r.batch(dirfd, names[done:done+n], sts[done:done+n], errs[done:done+n], m) {
			r.close()
			break
		}
		done += n
	}
	once() // no ring, no name, or a ring that failed before it could
	for i := done; i < len(names); i++ {
		errs[i] = statAt(dirfd, names[i], &sts[i])
	}
}

// batch submits a statx of each name and waits for every answer; false
// when the ring failed (nothing of this batch is answered). meanwhile
// (nil: nothing) is called once the statx are submitted, before the
// wait: the kernel's thread runs them beside it.
func (r *statRing) batch(dirfd int, names []string, sts []fileStat, errs []error, meanwhile func()) bool {
	size := 0
	for _, n := range names {
		size += len(n) + 1
	}
	if cap(r.names) < size {
		r.names = make([]byte, 0, max(size, 4096))
	}
	buf := r.names[:0]
	tail := atomic.LoadUint32(r.sqTail)
	for i, n := range names {
		off := len(buf)
		buf = append(buf, n...)
		buf = append(buf, 0)
		idx := (tail + uint32(i)) & r.sqMask
		sqe := (*uringSQE)(unsafe.Pointer(&r.sqes[idx*sqeSize]))
		*sqe = uringSQE{
			opcode:   ioringOpStatx,
			fd:       int32(dirfd),
			addr:     uint64(uintptr(unsafe.Pointer(&buf[off]))),
			addr2:    uint64(uintptr(unsafe.Pointer(&r.bufs[i]))),
			len:      statWant,
			opFlags:  unix.AT_SYMLINK_NOFOLLOW,
			userData: uint64(i),
		}
		r.sqArray[idx] = idx
	}
	r.names = buf
	atomic.StoreUint32(r.sqTail, tail+uint32(len(names)))
	answered := 0
	if cap(r.seen) < len(names) {
		r.seen = make([]bool, r.entries)
	}
	seen := r.seen[:len(names)]
	clear(seen)
	for answered < len(names) {
		toSubmit := atomic.LoadUint32(r.sqTail) - atomic.LoadUint32(r.sqHead)
		wait, flags := uintptr(len(names)-answered), uintptr(ioringEnterGetevent)
		if meanwhile != nil {
			wait, flags = 0, 0 // submit, and come back at once
		}
		_, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(toSubmit), wait, flags, 0, 0)
		if errno != 0 && errno != unix.EINTR && errno != unix.EAGAIN && errno != unix.EBUSY {
			if atomic.LoadUint32(r.sqHead) != tail {
				// Some are in flight: what they write stays out of the heap's reuse.
				abandoned = append(abandoned, r.bufs)
				r.bufs, r.names = nil, nil
			}
			return false
		}
		if meanwhile != nil {
			meanwhile()
			meanwhile = nil
		}
		head, ctail := atomic.LoadUint32(r.cqHead), atomic.LoadUint32(r.cqTail)
		for ; head != ctail; head++ {
			c := unsafe.Add(r.cqes, int(head&r.cqMask)*cqeSize)
			i := *(*uint64)(c)
			res := *(*int32)(unsafe.Add(c, 8))
			if i >= uint64(len(names)) || seen[i] {
				continue
			}
			seen[i] = true
			answered++
			switch {
			case res == -int32(unix.ENOENT):
				errs[i] = unix.ENOENT
			case res < 0 || r.bufs[i].Mask&statWant != statWant:
				r.fellBack++
				errs[i] = statAt(dirfd, names[i], &sts[i])
			default:
				fromStatx(&r.bufs[i], &sts[i])
				errs[i] = nil
			}
		}
		atomic.StoreUint32(r.cqHead, head)
	}
	return true
}

// fromStatx is what fstatat gives of the same entry (st_dev is the
// kernel's new_encode_dev of the device).
func fromStatx(x *unix.Statx_t, st *fileStat) {
	maj, minr := uint64(x.Dev_major), uint64(x.Dev_minor)
	*st = fileStat{
		mode:  uint32(x.Mode),
		nlink: uint64(x.Nlink),
		size:  int64(x.Size),
		mtime: x.Mtime.Sec*1e9 + int64(x.Mtime.Nsec),
		ctime: x.Ctime.Sec*1e9 + int64(x.Ctime.Nsec),
		dev:   minr&0xff | maj<<8 | (minr&^0xff)<<12,
		ino:   x.Ino,
	}
}

// statAt looks at name in dirfd with fstatat, not following a link.
func statAt(dirfd int, name string, st *fileStat) error {
	var s unix.Stat_t
	for {
		err := unix.Fstatat(dirfd, name, &s, unix.AT_SYMLINK_NOFOLLOW)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		*st = fileStat{
			mode: s.Mode, nlink: uint64(s.Nlink), size: s.Size,
			mtime: s.Mtim.Nano(), ctime: s.Ctim.Nano(), dev: uint64(s.Dev), ino: s.Ino,
		}
		return nil
	}
}
