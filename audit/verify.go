package audit

import (
	"errors"
	"fmt"
	"os"
)

// Problem kinds, stable strings.
const (
	KindEdited         = "edited"               // an entry's bytes changed
	KindDeleted        = "deleted_or_reordered" // entries missing, moved or duplicated
	KindMalformed      = "malformed"            // a line that is not an entry
	KindTruncated      = "truncated"            // the log ends before its sealed head
	KindHeadMACInvalid = "head_mac_invalid"     // the head was not sealed with this key
	KindHeadMissing    = "head_missing"         // entries but no head
	KindHeadMalformed  = "head_malformed"       // the head file does not parse
	KindHeadMismatch   = "head_mismatch"        // the sealed entry is not where the head says
	// KindTorn is bytes without a newline at the end of the log, after the
	// sealed head: an append cut short by a crash (or a cut, which the chain
	// cannot tell apart from one). It is not tampering; the next append
	// cuts it off.
	KindTorn = "torn_last_line"
)

// Problem is one finding of Verify. Seq and Line are 0 when not applicable.
type Problem struct {
	Seq  int    `json:"seq,omitempty"`
	Line int    `json:"line,omitempty"`
	Kind string `json:"kind"`
	Msg  string `json:"msg"`
}

// Report is the result of Verify.
type Report struct {
	Entries int `json:"entries"` // lines in the log
	// SealedSeq is the seq of the last entry protected by a valid head MAC
	// when Verify ran (0: none).
	SealedSeq int `json:"sealed_seq"`
	// Unsealed counts the entries after SealedSeq. They are protected by the
	// keyless chain only: cutting them off the end (back to SealedSeq) cannot
	// be detected.
	Unsealed int `json:"unsealed"`
	// Resealed is set when Verify found no problem and moved the head to the
	// last entry; ResealedSeq is then the new sealed seq.
	Resealed    bool      `json:"resealed"`
	ResealedSeq int       `json:"resealed_seq,omitempty"`
	Problems    []Problem `json:"problems"`
}

// OK reports whether Verify found no problem.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// verifyWindow is how far back Verify remembers entries to tell a moved
// entry from an edited one.
const verifyWindow = 256

type seenEntry struct {
	hash string
	line int
}

// Verify reads the whole log and checks every link of the chain, every seq,
// the head's MAC under sealKey and that the sealed entry is still in place.
// Problems go in the report; the error is for I/O failures and a bad key. If
// there is no problem, it seals the end of what it read (Resealed).
//
// Entries appended while Verify runs are not read; the log is read without
// holding the lock, so appends are not held up.
func (l *Log) Verify(sealKey []byte) (Report, error) {
	var rep Report
	if err := checkKey(sealKey); err != nil {
		return rep, err
	}
	// Snapshot the head and the size together, so the head never points
	// past what is read.
	var (
		h    *head
		herr error
		size int64
		f    *os.File
	)
	err := l.exclusive(func() error {
		var err error
		h, herr = l.readHead()
		f, size, err = l.openLog()
		return err
	})
	if err != nil {
		return rep, err
	}
	if f != nil {
		defer f.Close()
	}
	if herr != nil && !errors.Is(herr, errHeadMalformed) {
		return rep, herr
	}

	c := &chainCheck{rep: &rep, h: h, blamed: map[int]bool{}, recent: map[int]seenEntry{}, last: startPoint}
	consumed := int64(0)
	if f != nil {
		if consumed, err = scanLines(f, 0, size, c.line); err != nil {
			return rep, err
		}
	}
	c.end(consumed, size)
	rep.Entries = c.lineNo
	c.judgeHead(herr, sealKey)
	if !rep.OK() || (h != nil && h.Seq == c.last.Seq) {
		return rep, nil
	}

	// Seal what was verified.
	if err := l.sealPoint(sealKey, c.last); err != nil {
		return rep, fmt.Errorf("failed to reseal: %w", err)
	}
	rep.Resealed, rep.ResealedSeq = true, c.last.Seq
	return rep, nil
}

// chainCheck is Verify's reading of the log, line by line: the chain's
// links, the order of the seqs, and where the entry the head seals is.
type chainCheck struct {
	rep    *Report
	h      *head        // the head, nil when there is none
	blamed map[int]bool // one problem per line
	recent map[int]seenEntry
	maxSeq int
	lineNo int
	last   point // last entry read

	headLine int // line of the entry at h.Seq, 0 if not seen
	headSeen seenEntry
	headEnd  int64
	afterSeq int // parsed lines with seq above the head's
}

// add reports p, unless its line has a problem already.
func (c *chainCheck) add(p Problem) {
	if p.Line > 0 {
		if c.blamed[p.Line] {
			return
		}
		c.blamed[p.Line] = true
	}
	c.rep.Problems = append(c.rep.Problems, p)
}

// line checks one line of the log (scanLines' callback).
func (c *chainCheck) line(line []byte, start, next int64, tooLong bool) error {
	c.lineNo++
	hash := ""
	seq, prev, perr := 0, "", error(nil)
	if tooLong {
		perr = ErrCorrupt
	} else {
		hash = hashLine(line)
		seq, prev, perr = parseLink(line)
	}
	if perr != nil {
		// Take it as the entry that should be here, so the next
		// line is not also blamed.
		c.maxSeq++
		c.recent[c.maxSeq] = seenEntry{hash: hash, line: c.lineNo}
		c.add(Problem{Seq: c.maxSeq, Line: c.lineNo, Kind: KindMalformed,
			Msg: fmt.Sprintf("malformed entry at line %d (expected seq %d)", c.lineNo, c.maxSeq)})
		c.last = point{}
		return nil
	}
	c.link(seq, prev)
	c.order(seq)
	c.remember(seq, hash, next)
	return nil
}

// link checks the link back: prev must be the hash of entry seq-1.
func (c *chainCheck) link(seq int, prev string) {
	if seq == 1 {
		if prev != zeroHash {
			c.add(Problem{Seq: 1, Line: c.lineNo, Kind: KindEdited,
				Msg: fmt.Sprintf("edited entry at seq 1 (line %d)", c.lineNo)})
		}
	} else if before, ok := c.recent[seq-1]; ok && before.hash != prev {
		// Either entry seq-1 changed, or this entry's prev did;
		// blame the earlier one, whose bytes no longer hash to what
		// was chained.
		c.add(Problem{Seq: seq - 1, Line: before.line, Kind: KindEdited,
			Msg: fmt.Sprintf("edited entry at seq %d (line %d)", seq-1, before.line)})
	}
}

// order checks that seq follows the highest seq read so far.
func (c *chainCheck) order(seq int) {
	switch {
	case seq > c.maxSeq+1:
		c.add(Problem{Seq: seq, Line: c.lineNo, Kind: KindDeleted,
			Msg: fmt.Sprintf("deleted or reordered entry before seq %d (line %d)", seq, c.lineNo)})
	case seq <= c.maxSeq:
		c.add(Problem{Seq: seq, Line: c.lineNo, Kind: KindDeleted,
			Msg: fmt.Sprintf("deleted or reordered entry before seq %d: seq %d appears again, or out of order, at line %d", c.maxSeq+1, seq, c.lineNo)})
	}
}

// remember keeps the entry at seq, which ends at next, for the checks of
// the lines after it (within verifyWindow) and of the head.
func (c *chainCheck) remember(seq int, hash string, next int64) {
	if _, dup := c.recent[seq]; !dup {
		c.recent[seq] = seenEntry{hash: hash, line: c.lineNo}
	}
	c.maxSeq = max(c.maxSeq, seq)
	if len(c.recent) > 4*verifyWindow {
		for s := range c.recent {
			if s <= c.maxSeq-verifyWindow {
				delete(c.recent, s)
			}
		}
	}
	h := c.h
	if h != nil && seq > h.Seq {
		c.afterSeq++
	}
	if h != nil && seq == h.Seq && c.headLine == 0 {
		c.headLine, c.headSeen, c.headEnd = c.lineNo, seenEntry{hash: hash, line: c.lineNo}, next
	}
	c.last = point{Seq: seq, Hash: hash, Size: next}
}

// end judges the bytes after the last newline: consumed of size were
// whole lines.
func (c *chainCheck) end(consumed, size int64) {
	switch {
	case consumed == size:
	case c.h != nil && consumed < c.h.Size:
		// Cut inside what the head vouches for: that is no crash.
		c.lineNo++
		c.add(Problem{Seq: c.maxSeq + 1, Line: c.lineNo, Kind: KindMalformed,
			Msg: fmt.Sprintf("incomplete last line %d (%d bytes without a newline) inside the sealed part of the log", c.lineNo, size-consumed)})
	default:
		c.lineNo++
		c.add(Problem{Seq: c.maxSeq + 1, Line: c.lineNo, Kind: KindTorn,
			Msg: fmt.Sprintf("torn last line %d (%d bytes without a newline: an append cut short by a crash; the next append cuts it off)", c.lineNo, size-consumed)})
	}
}

// judgeHead checks the head (herr: it did not parse) against sealKey and
// the entries read, and says how much of the log it seals.
func (c *chainCheck) judgeHead(herr error, sealKey []byte) {
	h, rep := c.h, c.rep
	rep.Unsealed = rep.Entries
	if herr == nil && h != nil && h.validMAC(sealKey) {
		rep.SealedSeq = h.Seq
		rep.Unsealed = c.afterSeq
		if c.headLine > 0 {
			rep.Unsealed = rep.Entries - c.headLine
		}
	}
	switch {
	case herr != nil:
		c.add(Problem{Kind: KindHeadMalformed, Msg: "head malformed: the head file is not one loopguard writes"})
	case h == nil:
		if rep.Entries > 0 {
			c.add(Problem{Kind: KindHeadMissing, Msg: fmt.Sprintf(
				"head missing: none of the %d entries is sealed (the head file was deleted, or the log was never sealed)", rep.Entries)})
		}
	case !h.validMAC(sealKey):
		c.add(Problem{Kind: KindHeadMACInvalid, Msg: "head MAC invalid: the head was not sealed with this key (forged, or sealed under another key)"})
	case h.Seq == 0:
	case c.headLine == 0 && c.maxSeq < h.Seq:
		c.add(Problem{Seq: h.Seq, Kind: KindTruncated, Msg: fmt.Sprintf(
			"truncated: log ends at seq %d but the sealed head is at seq %d", c.maxSeq, h.Seq)})
	case c.headLine == 0:
		c.add(Problem{Seq: h.Seq, Kind: KindDeleted, Msg: fmt.Sprintf(
			"deleted or reordered entry before seq %d: the sealed entry at seq %d is missing", h.Seq+1, h.Seq)})
	case c.headSeen.hash != h.Hash:
		c.add(Problem{Seq: h.Seq, Line: c.headLine, Kind: KindEdited, Msg: fmt.Sprintf(
			"edited entry at seq %d (line %d)", h.Seq, c.headLine)})
	case c.headEnd != h.Size && len(rep.Problems) == 0:
		// Only worth saying when nothing before explains the shift.
		c.add(Problem{Seq: h.Seq, Line: c.headLine, Kind: KindHeadMismatch, Msg: fmt.Sprintf(
			"sealed entry at seq %d ends at byte %d, but the head says %d", h.Seq, c.headEnd, h.Size)})
	}
}

// sealPoint seals p, a point Verify read, if it is still in the log.
func (l *Log) sealPoint(key []byte, p point) error {
	return l.exclusive(func() error {
		f, err := l.openAppend()
		if err != nil {
			return err
		}
		defer f.Close()
		return l.sealLocked(f, key, key, p)
	})
}
