package tcpproxy

import (
	"bytes"
	"strconv"
	"sync/atomic"
)

// The protocols a proxy frames, found from the first bytes a client sends.
const (
	protoUnknown uint32 = iota
	protoRESP           // Redis: requests are arrays of bulk strings
	protoHTTP1          // HTTP/1.x: a Kubernetes or lease API server
	protoH2             // HTTP/2 with prior knowledge: gRPC (etcd)
	protoNone           // not one the proxy frames: bytes are counted, messages are not
)

// protoNames are the protocols' names in Counts.Protocol.
var protoNames = map[uint32]string{protoRESP: "resp", protoHTTP1: "http/1", protoH2: "http/2", protoNone: "unframed"}

// h2Preface opens every HTTP/2 connection with prior knowledge (gRPC's).
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// framer finds the message boundaries of one leg of a connection, to count
// requests and replies and to copy a whole request. It gives up (the leg
// becomes unframed) on anything it does not understand, rather than guess.
type framer struct {
	proto *atomic.Uint32 // the connection's, shared by its two legs
	tail  []byte         // the start of a message not complete yet
	gone  bool           // gave up on this leg
	// Request-leg state of a RESP connection: a transaction or a
	// subscription is no place for a copy; setup is the commands a copy's
	// own connection must replay first (AUTH, HELLO, SELECT).
	inMulti, noCopy bool
	setup           [][]byte
	http            httpState
	h2              h2State
}

// feed takes the next bytes of the leg and returns how many messages ended
// in them, and (request leg, wantCopy) the whole requests that ended there
// and may be sent again; gaveUp is true the one time it gives up on a
// leg it had not framed before.
func (f *framer) feed(b []byte, leg Leg, wantCopy bool) (msgs int, copies [][]byte, gaveUp bool) {
	if f.gone {
		return 0, nil, false
	}
	proto := f.proto.Load()
	if proto == protoUnknown && leg == Request && len(b) > 0 {
		proto = sniff(b)
		f.proto.CompareAndSwap(protoUnknown, proto)
		proto = f.proto.Load()
	}
	if proto == protoUnknown && leg == Reply {
		// The server spoke before the client's first bytes were read (an
		// HTTP/2 server's SETTINGS): keep them until the protocol is known.
		if len(f.tail)+len(b) > 64<<10 {
			f.gone, f.tail = true, nil
			return 0, nil, true
		}
		f.tail = append(f.tail, b...)
		return 0, nil, false
	}
	switch proto {
	case protoHTTP1:
		n, ok := f.feedHTTP(b, leg)
		if !ok {
			f.gone, f.tail = true, nil
		}
		return n, nil, !ok
	case protoH2:
		n, ok := f.feedH2(b, leg)
		if !ok {
			f.gone, f.tail = true, nil
		}
		return n, nil, !ok
	case protoRESP:
	default:
		f.gone = true
		return 0, nil, true
	}
	data := b
	if len(f.tail) > 0 {
		f.tail = append(f.tail, b...)
		data = f.tail
	}
	for len(data) > 0 {
		n, ok := respValue(data, 0)
		if n < 0 {
			f.gone, f.tail = true, nil
			return msgs, copies, true
		}
		if !ok {
			break
		}
		msg := data[:n]
		data = data[n:]
		if leg == Reply && msg[0] == '>' {
			continue // a RESP3 push answers no request
		}
		msgs++
		if leg == Request {
			if c := f.request(msg, wantCopy); c != nil {
				copies = append(copies, c)
			}
		}
	}
	if len(data) == 0 {
		f.tail = f.tail[:0]
	} else if len(f.tail) == 0 || &data[0] != &f.tail[0] {
		f.tail = append(f.tail[:0], data...)
	}
	return msgs, copies, false
}

// request follows a RESP connection's state through one command and
// returns a copy of it when it may be sent again on a connection of its
// own: not inside MULTI (queued, it would run alone, unqueued), not once
// the connection subscribes or monitors (its replies are no longer one per
// request), not a command that sets the connection up or changes how it
// replies.
func (f *framer) request(msg []byte, wantCopy bool) []byte {
	name := bytes.ToUpper(respCommand(msg))
	switch string(name) {
	case "MULTI":
		f.inMulti = true
		return nil
	case "EXEC", "DISCARD":
		f.inMulti = false
		return nil
	case "AUTH", "HELLO", "SELECT":
		f.setup = append(f.setup, bytes.Clone(msg))
		return nil
	case "SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE", "MONITOR", "QUIT", "RESET":
		f.noCopy = true
		return nil
	case "CLIENT":
		// CLIENT REPLY changes which requests get replies; the rest
		// (SETNAME, SETINFO, ID, ...) concern the connection alone.
		if bytes.EqualFold(respArg(msg, 1), []byte("REPLY")) {
			f.noCopy = true
		}
		return nil
	case "WATCH", "UNWATCH":
		return nil
	}
	if !wantCopy || f.inMulti || f.noCopy || len(name) == 0 {
		return nil
	}
	return bytes.Clone(msg)
}

// respCommand is the name of a RESP command (the first bulk string of its
// array), or nil.
func respCommand(msg []byte) []byte { return respArg(msg, 0) }

// respArg is argument i of a RESP command (0: its name), or nil.
func respArg(msg []byte, i int) []byte {
	if len(msg) == 0 || msg[0] != '*' {
		return nil
	}
	eol := bytes.Index(msg, []byte("\r\n"))
	if eol < 0 {
		return nil
	}
	rest := msg[eol+2:]
	for k := 0; ; k++ {
		if len(rest) == 0 || rest[0] != '$' {
			return nil
		}
		j := bytes.Index(rest, []byte("\r\n"))
		if j < 0 {
			return nil
		}
		n, err := strconv.Atoi(string(rest[1:j]))
		if err != nil || n < 0 || j+2+n > len(rest) {
			return nil
		}
		if k == i {
			return rest[j+2 : j+2+n]
		}
		rest = rest[min(j+2+n+2, len(rest)):]
	}
}

// respValue measures the RESP value (RESP2 or RESP3) that starts b: its
// length and true when it is complete, 0 and false when more bytes are
// needed, -1 when b is not RESP.
func respValue(b []byte, depth int) (int, bool) {
	if depth > 64 {
		return -1, false
	}
	if len(b) == 0 {
		return 0, false
	}
	eol := bytes.Index(b, []byte("\r\n"))
	if eol < 0 {
		if len(b) > 64<<10 {
			return -1, false // no line is that long in RESP's headers
		}
		return 0, false
	}
	line := b[1:eol]
	head := eol + 2
	switch b[0] {
	case '+', '-', ':', '_', ',', '#', '(':
		return head, true
	case '$', '!', '=':
		n, err := strconv.Atoi(string(line))
		if err != nil || n < -1 {
			return -1, false
		}
		if n == -1 {
			return head, true
		}
		if len(b) < head+n+2 {
			return 0, false
		}
		return head + n + 2, true
	case '*', '%', '~', '>', '|':
		n, err := strconv.Atoi(string(line))
		if err != nil || n < -1 {
			return -1, false
		}
		if b[0] == '%' || b[0] == '|' {
			n *= 2
		}
		at := head
		for i := 0; i < n; i++ {
			m, ok := respValue(b[at:], depth+1)
			if m < 0 || !ok {
				return m, ok
			}
			at += m
		}
		if b[0] == '|' { // an attribute precedes the value it annotates
			m, ok := respValue(b[at:], depth+1)
			if m < 0 || !ok {
				return m, ok
			}
			at += m
		}
		return at, true
	}
	return -1, false
}
