package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// This file turns one line of a history into a rawLine: the JSON values of
// the fields the format knows, not yet checked against the format's rules.
// Two decoders do it and must agree exactly:
//
//   - decodeFast, a hand-rolled scanner for the common case: one flat object
//     whose values are strings without escapes, integers, booleans and null.
//     It allocates nothing: the values it returns are slices of the line.
//     Whenever it meets anything else (escapes, fractions, exponents, nested
//     values, syntax errors, non-ASCII bytes that are not valid UTF-8) it
//     gives up and says so.
//   - decodeSlow, the fallback, which hands the line to encoding/json.
//
// All the format's rules are checked afterwards on the rawLine (see
// history_read.go), so both decoders produce identical ops and identical
// messages. The only messages that come from the decoders themselves (invalid
// UTF-8, invalid JSON, not an object) are always produced by decodeSlow.

// field is a field name the format knows: header, op and fault-record
// fields together.
type field uint8

const (
	fFormat field = iota
	fVersion
	fTimeUnit
	fClockUncertainty
	fSemantics
	fFences
	fExpiryLateness
	fTokens
	fProcess
	fOwner
	fKey
	fOp
	fTTL
	fFence
	fValue
	fCall
	fReturn
	fAt
	fOK
	fError
	fFault
	fTarget
	fStart
	fEnd
	fAmount
	fPeer
	fDetail
	fPartial
	nFields
)

var fieldNames = [nFields]string{
	fFormat:           "format",
	fVersion:          "version",
	fTimeUnit:         "time_unit",
	fClockUncertainty: "clock_uncertainty",
	fSemantics:        "semantics",
	fFences:           "fences",
	fExpiryLateness:   "expiry_lateness",
	fTokens:           "tokens",
	fProcess:          "process",
	fOwner:            "owner",
	fKey:              "key",
	fOp:               "op",
	fTTL:              "ttl",
	fFence:            "fence",
	fValue:            "value",
	fCall:             "call",
	fReturn:           "return",
	fAt:               "at",
	fOK:               "ok",
	fError:            "error",
	fFault:            "fault",
	fTarget:           "target",
	fStart:            "start",
	fEnd:              "end",
	fAmount:           "amount",
	fPeer:             "peer",
	fDetail:           "detail",
	fPartial:          "partial",
}

// The fields of each kind of line. A known field on a line of another kind
// is treated like an unknown one (warned, ignored; an error under Strict).
const (
	headerFields = 1<<fFormat | 1<<fVersion | 1<<fTimeUnit | 1<<fClockUncertainty | 1<<fSemantics | 1<<fFences | 1<<fExpiryLateness | 1<<fTokens
	opFields     = 1<<fProcess | 1<<fOwner | 1<<fKey | 1<<fOp | 1<<fTTL | 1<<fFence | 1<<fValue | 1<<fCall |
		1<<fReturn | 1<<fAt | 1<<fOK | 1<<fError
	faultFields = 1<<fFault | 1<<fTarget | 1<<fStart | 1<<fEnd | 1<<fAmount | 1<<fPeer | 1<<fDetail | 1<<fPartial
)

func (f field) String() string { return fieldNames[f] }

// fieldHash is a perfect hash of the known field names, used by
// lookupField; init checks that it has no collisions.
func fieldHash(key []byte) uint {
	n := len(key)
	return (uint(n)*4 + uint(key[0])*2 + uint(key[n-1])) & 63
}

var fieldTable [64]int8 // fieldHash -> field+1; 0: not a known field

func init() {
	for f := range nFields {
		h := fieldHash([]byte(fieldNames[f]))
		if fieldTable[h] != 0 {
			panic("model: fieldHash collision: " + fieldNames[f] + " and " + fieldNames[fieldTable[h]-1])
		}
		fieldTable[h] = int8(f) + 1
	}
}

// lookupField maps a key (exactly, case-sensitively) to a known field.
func lookupField(key []byte) (field, bool) {
	if len(key) == 0 {
		return 0, false
	}
	f := fieldTable[fieldHash(key)] - 1
	if f < 0 || string(key) != fieldNames[f] {
		return 0, false
	}
	return field(f), true
}

// jkind is the JSON type of a value. null is not a kind: a null value
// counts as an absent field.
type jkind uint8

const (
	jString jkind = iota + 1
	jNumber
	jBool
	jObject
	jArray
)

func (k jkind) String() string {
	switch k {
	case jString:
		return "string"
	case jNumber:
		return "number"
	case jBool:
		return "boolean"
	case jObject:
		return "object"
	case jArray:
		return "array"
	}
	return "null"
}

// rawVal is one field's JSON value. For a string, its (unescaped) content
// is line[s:e], or buf[s:e] when inBuf; for a number, its literal text is
// there too, and when nOK, n is its value (a JSON integer that fits an
// int64). For a boolean, t is the value. It holds no pointers, so that
// storing one costs no write barrier.
type rawVal struct {
	kind  jkind
	t     bool
	inBuf bool
	nOK   bool
	s, e  int
	n     int64
}

// rawLine holds the known fields present (and not null) on one line, and
// the names of the fields it does not know.
type rawLine struct {
	set  uint32 // bit f: field f is present and not null
	seen uint32 // bit f: field f is present, null or not
	v    [nFields]rawVal
	// unknown are the keys of the fields the format does not know, in the
	// order of the line: line[s:e], or buf[s:e] when inBuf.
	unknown []rawVal
	line    []byte // the line decoded
	buf     []byte // decoded strings the line does not hold verbatim (escapes)
}

func (r *rawLine) has(f field) bool { return r.set&(1<<f) != 0 }

// bytes returns v's string content or number literal; valid until the
// next line is decoded.
func (r *rawLine) bytes(v *rawVal) []byte {
	if v.inBuf {
		return r.buf[v.s:v.e]
	}
	return r.line[v.s:v.e]
}

// isJSONSpace reports whether c is JSON insignificant whitespace.
func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipWS(b []byte, i int) int {
	for i < len(b) && isJSONSpace(b[i]) {
		i++
	}
	return i
}

// isBlank reports whether a line holds nothing but JSON whitespace.
func isBlank(b []byte) bool { return skipWS(b, 0) == len(b) }

// strClass classifies the bytes inside a JSON string for decodeFast:
// 0: stop (the closing quote, a backslash, a control character),
// 1: ASCII, 2: part of a multi-byte UTF-8 sequence.
var strClass = func() (t [256]uint8) {
	for c := 0x20; c < 256; c++ {
		t[c] = 1
		if c >= utf8.RuneSelf {
			t[c] = 2
		}
	}
	t['"'], t['\\'] = 0, 0
	return t
}()

// maxFastUnknown bounds the unknown fields decodeFast handles on one line
// (it checks them for duplicates pairwise); past it, decodeSlow decides.
const maxFastUnknown = 8

// decodeFast decodes line into raw, or reports false when it cannot decide
// the line on its own (raw is then garbage and decodeSlow must be used).
// It never accepts a line that encoding/json would reject, and whatever it
// accepts, it decodes to exactly what decodeSlow would.
func decodeFast(line []byte, raw *rawLine) bool {
	raw.set, raw.seen = 0, 0
	raw.unknown = raw.unknown[:0]
	raw.line = line
	n := len(line)
	hi := uint8(0) // 2 when a string held a non-ASCII byte
	i := skipWS(line, 0)
	if i >= n || line[i] != '{' {
		return false
	}
	i = skipWS(line, i+1)
	if i < n && line[i] == '}' {
		i++
	} else {
		for {
			// Key.
			if i >= n || line[i] != '"' {
				return false
			}
			i++
			ks := i
			for i < n {
				c := strClass[line[i]]
				if c == 0 {
					break
				}
				hi |= c
				i++
			}
			if i >= n || line[i] != '"' {
				return false
			}
			key := line[ks:i]
			i++
			if i < n && line[i] == ':' {
				i++
			} else {
				i = skipWS(line, i)
				if i >= n || line[i] != ':' {
					return false
				}
				i++
			}
			if i < n && isJSONSpace(line[i]) {
				i = skipWS(line, i)
			}
			if i >= n {
				return false
			}
			// Value.
			var v rawVal
			null := false
			switch c := line[i]; {
			case c == '"':
				i++
				vs := i
				for i < n {
					c := strClass[line[i]]
					if c == 0 {
						break
					}
					hi |= c
					i++
				}
				if i >= n || line[i] != '"' {
					return false
				}
				v = rawVal{kind: jString, s: vs, e: i}
				i++
			case c == 't':
				if n-i < 4 || string(line[i:i+4]) != "true" {
					return false
				}
				v = rawVal{kind: jBool, t: true}
				i += 4
			case c == 'f':
				if n-i < 5 || string(line[i:i+5]) != "false" {
					return false
				}
				v = rawVal{kind: jBool}
				i += 5
			case c == 'n':
				if n-i < 4 || string(line[i:i+4]) != "null" {
					return false
				}
				null = true
				i += 4
			case c == '-' || ('0' <= c && c <= '9'):
				// Integers only: -?(0|[1-9][0-9]*). Anything that follows
				// (a fraction, an exponent, a leading zero's digits) is
				// not a delimiter, and the check below gives up.
				s := i
				if c == '-' {
					i++
				}
				if i >= n || line[i] < '0' || line[i] > '9' {
					return false
				}
				var u uint64
				if line[i] == '0' {
					i++
				} else {
					for i < n && '0' <= line[i] && line[i] <= '9' {
						u = u*10 + uint64(line[i]-'0')
						i++
					}
				}
				v = rawVal{kind: jNumber, s: s, e: i}
				// Up to 18 digits cannot overflow; longer literals are
				// left to parseIntLit.
				if nd := i - s; (c != '-' && nd <= 18) || (c == '-' && nd <= 19) {
					v.nOK = true
					v.n = int64(u)
					if c == '-' {
						v.n = -v.n
					}
				}
			default:
				// Nested objects and arrays, and syntax errors.
				return false
			}
			if f, ok := lookupField(key); ok {
				if raw.seen&(1<<f) != 0 {
					return false // a duplicate field: decodeSlow says so
				}
				raw.seen |= 1 << f
				if !null {
					raw.set |= 1 << f
					raw.v[f] = v
				}
			} else {
				if len(raw.unknown) == maxFastUnknown {
					return false
				}
				for _, u := range raw.unknown {
					if string(line[u.s:u.e]) == string(key) {
						return false // a duplicate field: decodeSlow says so
					}
				}
				raw.unknown = append(raw.unknown, rawVal{kind: jString, s: ks, e: ks + len(key)})
			}
			if i < n && line[i] == ',' {
				i++
				if i < n && line[i] == '"' {
					continue
				}
				i = skipWS(line, i)
				continue
			}
			i = skipWS(line, i)
			if i >= n {
				return false
			}
			if line[i] == ',' {
				i = skipWS(line, i+1)
				continue
			}
			if line[i] != '}' {
				return false
			}
			i++
			break
		}
	}
	if i < n && skipWS(line, i) != n {
		return false
	}
	if hi >= 2 && !utf8.Valid(line) {
		return false
	}
	return true
}

// decodeSlow decodes line into raw with encoding/json. It returns "" on
// success, or the reason the line is not a JSON object.
func decodeSlow(line []byte, raw *rawLine) string {
	raw.set, raw.seen = 0, 0
	raw.unknown = raw.unknown[:0]
	raw.line = line
	raw.buf = raw.buf[:0]
	if !utf8.Valid(line) {
		i := 0
		for i < len(line) {
			r, size := utf8.DecodeRune(line[i:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			i += size
		}
		return fmt.Sprintf("invalid UTF-8 at byte %d (a history must be UTF-8)", i+1)
	}
	var m map[string]json.RawMessage // only for encoding/json's own messages
	err := json.Unmarshal(line, &m)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("invalid JSON: %s (at byte %d)", se.Error(), se.Offset)
	}
	// The line is valid JSON; is it an object?
	i := skipWS(line, 0)
	if i >= len(line) {
		return "invalid JSON: unexpected end of JSON input"
	}
	if k := valueKind(line[i]); k != jObject {
		return fmt.Sprintf("not a JSON object (got %s); every line must be one JSON object", k)
	}
	if err != nil {
		return "invalid JSON: " + err.Error()
	}
	// The line is a valid JSON object. Walk its fields in order, which the
	// map above lost, to find duplicates and keep the unknown keys in order.
	dec := json.NewDecoder(bytes.NewReader(line))
	if _, err := dec.Token(); err != nil { // '{'
		return "invalid JSON: " + err.Error()
	}
	keys := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "invalid JSON: " + err.Error()
		}
		k, _ := tok.(string)
		var rv json.RawMessage
		if err := dec.Decode(&rv); err != nil {
			return "invalid JSON: " + err.Error()
		}
		if keys[k] {
			return fmt.Sprintf("duplicate field %s: a field may appear only once in an object", quoteShort(k))
		}
		keys[k] = true
		f, ok := lookupField([]byte(k))
		if !ok {
			raw.unknown = append(raw.unknown, rawVal{kind: jString, inBuf: true, s: len(raw.buf), e: len(raw.buf) + len(k)})
			raw.buf = append(raw.buf, k...)
			continue
		}
		raw.seen |= 1 << f
		rv = bytes.TrimFunc(rv, func(r rune) bool { return r < utf8.RuneSelf && isJSONSpace(byte(r)) })
		if len(rv) == 0 {
			continue // cannot happen for valid JSON
		}
		var v rawVal
		switch k := valueKind(rv[0]); k {
		case 0: // null
			continue
		case jString:
			var s string
			if err := json.Unmarshal(rv, &s); err != nil {
				return "invalid JSON: " + err.Error()
			}
			v = rawVal{kind: jString, inBuf: true, s: len(raw.buf), e: len(raw.buf) + len(s)}
			raw.buf = append(raw.buf, s...)
		case jBool:
			v = rawVal{kind: jBool, t: rv[0] == 't'}
		case jNumber:
			v = rawVal{kind: jNumber, inBuf: true, s: len(raw.buf), e: len(raw.buf) + len(rv)}
			raw.buf = append(raw.buf, rv...)
		default:
			v = rawVal{kind: k}
		}
		raw.set |= 1 << f
		raw.v[f] = v
	}
	return ""
}

// valueKind classifies a valid JSON value by its first byte; 0 is null.
func valueKind(c byte) jkind {
	switch c {
	case '"':
		return jString
	case 't', 'f':
		return jBool
	case 'n':
		return 0
	case '{':
		return jObject
	case '[':
		return jArray
	}
	return jNumber
}

// parseIntLit parses a valid JSON number literal as an int64. frac is true
// when it has a fraction or an exponent (so is not a JSON integer); ok is
// false when it is an integer that does not fit in an int64.
func parseIntLit(b []byte) (v int64, frac, ok bool) {
	i := 0
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg = true
		i = 1
	}
	var u uint64
	digits := 0
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, true, false // '.', 'e' or 'E'
		}
		u = u*10 + uint64(c-'0') // may wrap past 19 digits: see below
		digits++
	}
	if digits > 19 {
		// Valid JSON has no leading zeros, so this is >= 1e19. (19 digits
		// fit in a uint64 without wrapping.)
		return 0, false, false
	}
	if neg {
		if u > 1<<63 {
			return 0, false, false
		}
		return int64(-u), false, true
	}
	if u > 1<<63-1 {
		return 0, false, false
	}
	return int64(u), false, true
}

// shorten renders a literal or string for a message, cut when long.
func shorten(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

func quoteShort(s string) string { return strconv.Quote(shorten(s)) }
