package shellparse

import "mvdan.cc/sh/v3/syntax"

// Quotes parses command as bash does and returns, by byte offset, the
// opening and the closing quote of each of its plain single- and
// double-quoted strings (the quote character; not of $'...' or $"..."),
// wherever they are nested. A quote that is one of bash's but is not a string's
// opening or closing quote (one inside another quote, an escaped one, one
// in a comment or a here-document) is in neither. An error says bash
// cannot parse the command.
//
// Qwen Code's rewrite of a git commit's message after its hook inserts
// text before the closing quote its own expression finds (agents/qwen):
// this is how the adapter checks that the quote is bash's.
func Quotes(command string) (opens, closes map[int]byte, err error) {
	f, err := parse(command)
	if err != nil {
		return nil, nil, err
	}
	opens, closes = map[int]byte{}, map[int]byte{}
	walk(f, func(n syntax.Node) bool {
		switch q := n.(type) {
		case *syntax.SglQuoted:
			if !q.Dollar {
				opens[int(q.Left.Offset())], closes[int(q.Right.Offset())] = '\'', '\''
			}
		case *syntax.DblQuoted:
			if !q.Dollar {
				opens[int(q.Left.Offset())], closes[int(q.Right.Offset())] = '"', '"'
			}
		}
		return true
	})
	return opens, closes, nil
}
