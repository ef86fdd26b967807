package report

import (
	"strconv"
	"unicode/utf8"
)

// jsonBuf appends JSON to a byte slice by hand: the page's data is a few
// megabytes of integer columns for a large history, which encoding/json
// would build from reflection and intermediate values. Everything a string
// holds is user data (process names, values, stories), so strings are
// escaped for the place they land in: inside a <script> element of an HTML
// page. '<', '>' and '&' become \u003c, \u003e, \u0026 — no value can end
// the script element or open a comment — and U+2028/U+2029 are escaped
// too, as encoding/json does.
type jsonBuf struct{ b []byte }

func (j *jsonBuf) raw(s string) { j.b = append(j.b, s...) }

func (j *jsonBuf) int(n int64) { j.b = strconv.AppendInt(j.b, n, 10) }

func (j *jsonBuf) bool(v bool) { j.b = strconv.AppendBool(j.b, v) }

// key writes `"name":` after a comma unless first.
func (j *jsonBuf) key(name string, first bool) {
	if !first {
		j.b = append(j.b, ',')
	}
	j.str(name)
	j.b = append(j.b, ':')
}

// field writes `"name":` on a line of its own, after a comma unless first:
// the page's top-level fields go one a line.
func (j *jsonBuf) field(name string, first bool) {
	if !first {
		j.b = append(j.b, ',', '\n')
	}
	j.str(name)
	j.b = append(j.b, ':')
}

// strPair writes the array [a, b].
func (j *jsonBuf) strPair(a, b string) {
	j.b = append(j.b, '[')
	j.str(a)
	j.b = append(j.b, ',')
	j.str(b)
	j.b = append(j.b, ']')
}

func (j *jsonBuf) ints(ns []int64) {
	j.b = append(j.b, '[')
	for i, n := range ns {
		if i > 0 {
			j.b = append(j.b, ',')
		}
		j.b = strconv.AppendInt(j.b, n, 10)
	}
	j.b = append(j.b, ']')
}

func (j *jsonBuf) strs(ss []string) {
	j.b = append(j.b, '[')
	for i, s := range ss {
		if i > 0 {
			j.b = append(j.b, ',')
		}
		j.str(s)
	}
	j.b = append(j.b, ']')
}

const hexDigits = "0123456789abcdef"

func (j *jsonBuf) str(s string) {
	j.b = appendJSONString(j.b, s)
}

// appendJSONString appends s as a JSON string that is safe inside an HTML
// <script> element. Invalid UTF-8 becomes U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
