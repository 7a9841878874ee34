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

	blamed := map[int]bool{} // one problem per line
	add := func(p Problem) {
		if p.Line > 0 {
			if blamed[p.Line] {
				return
			}
			blamed[p.Line] = true
		}
		rep.Problems = append(rep.Problems, p)
	}

	var (
		recent   = map[int]seenEntry{}
		maxSeq   int
		lineNo   int
		last     = startPoint // last entry read
		headLine int          // line of the entry at h.Seq, 0 if not seen
		headSeen seenEntry
		headEnd  int64
		afterSeq int // parsed lines with seq above the head's
	)
	consumed := int64(0)
	if f != nil {
		consumed, err = scanLines(f, 0, size, func(line []byte, start, next int64, tooLong bool) error {
			lineNo++
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
				maxSeq++
				recent[maxSeq] = seenEntry{hash: hash, line: lineNo}
				add(Problem{Seq: maxSeq, Line: lineNo, Kind: KindMalformed,
					Msg: fmt.Sprintf("malformed entry at line %d (expected seq %d)", lineNo, maxSeq)})
				last = point{}
				return nil
			}
			// The link back: prev must be the hash of entry seq-1.
			if seq == 1 {
				if prev != zeroHash {
					add(Problem{Seq: 1, Line: lineNo, Kind: KindEdited,
						Msg: fmt.Sprintf("edited entry at seq 1 (line %d)", lineNo)})
				}
			} else if before, ok := recent[seq-1]; ok && before.hash != prev {
				// Either entry seq-1 changed, or this entry's prev did;
				// blame the earlier one, whose bytes no longer hash to what
				// was chained.
				add(Problem{Seq: seq - 1, Line: before.line, Kind: KindEdited,
					Msg: fmt.Sprintf("edited entry at seq %d (line %d)", seq-1, before.line)})
			}
			// The order.
			switch {
			case seq > maxSeq+1:
				add(Problem{Seq: seq, Line: lineNo, Kind: KindDeleted,
					Msg: fmt.Sprintf("deleted or reordered entry before seq %d (line %d)", seq, lineNo)})
			case seq <= maxSeq:
				add(Problem{Seq: seq, Line: lineNo, Kind: KindDeleted,
					Msg: fmt.Sprintf("deleted or reordered entry before seq %d: seq %d appears again, or out of order, at line %d", maxSeq+1, seq, lineNo)})
			}
			if _, dup := recent[seq]; !dup {
				recent[seq] = seenEntry{hash: hash, line: lineNo}
			}
			maxSeq = max(maxSeq, seq)
			if len(recent) > 4*verifyWindow {
				for s := range recent {
					if s <= maxSeq-verifyWindow {
						delete(recent, s)
					}
				}
			}
			if h != nil && seq > h.Seq {
				afterSeq++
			}
			if h != nil && seq == h.Seq && headLine == 0 {
				headLine, headSeen, headEnd = lineNo, seenEntry{hash: hash, line: lineNo}, next
			}
			last = point{Seq: seq, Hash: hash, Size: next}
			return nil
		})
		if err != nil {
			return rep, err
		}
	}
	switch {
	case consumed == size:
	case h != nil && consumed < h.Size:
		// Cut inside what the head vouches for: that is no crash.
		lineNo++
		add(Problem{Seq: maxSeq + 1, Line: lineNo, Kind: KindMalformed,
			Msg: fmt.Sprintf("incomplete last line %d (%d bytes without a newline) inside the sealed part of the log", lineNo, size-consumed)})
	default:
		lineNo++
		add(Problem{Seq: maxSeq + 1, Line: lineNo, Kind: KindTorn,
			Msg: fmt.Sprintf("torn last line %d (%d bytes without a newline: an append cut short by a crash; the next append cuts it off)", lineNo, size-consumed)})
	}
	rep.Entries = lineNo

	// The head.
	rep.Unsealed = rep.Entries
	if herr == nil && h != nil && h.validMAC(sealKey) {
		rep.SealedSeq = h.Seq
		rep.Unsealed = afterSeq
		if headLine > 0 {
			rep.Unsealed = rep.Entries - headLine
		}
	}
	switch {
	case herr != nil:
		add(Problem{Kind: KindHeadMalformed, Msg: "head malformed: the head file is not one loopguard writes"})
	case h == nil:
		if rep.Entries > 0 {
			add(Problem{Kind: KindHeadMissing, Msg: fmt.Sprintf(
				"head missing: none of the %d entries is sealed (the head file was deleted, or the log was never sealed)", rep.Entries)})
		}
	case !h.validMAC(sealKey):
		add(Problem{Kind: KindHeadMACInvalid, Msg: "head MAC invalid: the head was not sealed with this key (forged, or sealed under another key)"})
	case h.Seq == 0:
	case headLine == 0 && maxSeq < h.Seq:
		add(Problem{Seq: h.Seq, Kind: KindTruncated, Msg: fmt.Sprintf(
			"truncated: log ends at seq %d but the sealed head is at seq %d", maxSeq, h.Seq)})
	case headLine == 0:
		add(Problem{Seq: h.Seq, Kind: KindDeleted, Msg: fmt.Sprintf(
			"deleted or reordered entry before seq %d: the sealed entry at seq %d is missing", h.Seq+1, h.Seq)})
	case headSeen.hash != h.Hash:
		add(Problem{Seq: h.Seq, Line: headLine, Kind: KindEdited, Msg: fmt.Sprintf(
			"edited entry at seq %d (line %d)", h.Seq, headLine)})
	case headEnd != h.Size && len(rep.Problems) == 0:
		// Only worth saying when nothing before explains the shift.
		add(Problem{Seq: h.Seq, Line: headLine, Kind: KindHeadMismatch, Msg: fmt.Sprintf(
			"sealed entry at seq %d ends at byte %d, but the head says %d", h.Seq, headEnd, h.Size)})
	}
	if !rep.OK() || (h != nil && h.Seq == last.Seq) {
		return rep, nil
	}

	// Seal what was verified.
	if err := l.sealPoint(sealKey, last); err != nil {
		return rep, fmt.Errorf("failed to reseal: %w", err)
	}
	rep.Resealed, rep.ResealedSeq = true, last.Seq
	return rep, nil
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
