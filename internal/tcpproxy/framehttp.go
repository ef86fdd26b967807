package tcpproxy

import (
	"bytes"
	"encoding/binary"
	"strconv"
)

// sniff names the protocol a client's first bytes open.
func sniff(b []byte) uint32 {
	switch {
	case b[0] == '*':
		return protoRESP
	case bytes.HasPrefix(b, []byte(h2Preface)) || bytes.HasPrefix([]byte(h2Preface), b):
		return protoH2
	}
	for _, m := range []string{"GET ", "PUT ", "POST ", "PATCH ", "DELETE ", "HEAD ", "OPTIONS "} {
		if bytes.HasPrefix(b, []byte(m)) {
			return protoHTTP1
		}
	}
	return protoNone
}

// httpState follows an HTTP/1 leg through heads and bodies without keeping
// the bodies: a watch's response may never end.
type httpState struct {
	inBody     bool
	left       int64 // a Content-Length body's bytes to come
	chunked    bool
	chunkStage uint8 // 0: a size line next, 1: in a chunk's data (left, then CRLF), 2: in the trailers
	untilClose bool  // a response whose body ends with the connection
}

// feedHTTP counts the HTTP/1 messages whose heads end in b: requests on
// the request leg, final responses (not 1xx) on the reply leg. It counts a
// message when its head is complete, so a streamed response counts when it
// begins. false: not HTTP/1 it understands.
func (f *framer) feedHTTP(b []byte, leg Leg) (int, bool) {
	h := &f.http
	data := b
	if len(f.tail) > 0 {
		f.tail = append(f.tail, b...)
		data = f.tail
	}
	msgs := 0
	for len(data) > 0 {
		if h.untilClose {
			data = nil
			break
		}
		if !h.inBody {
			end := bytes.Index(data, []byte("\r\n\r\n"))
			if end < 0 {
				if len(data) > 64<<10 {
					return msgs, false
				}
				break
			}
			counted, ok := h.head(data[:end+2], leg)
			if !ok {
				return msgs, false
			}
			if counted {
				msgs++
			}
			data = data[end+4:]
			continue
		}
		if !h.chunked {
			n := min(int64(len(data)), h.left)
			h.left -= n
			data = data[n:]
			if h.left == 0 {
				h.inBody = false
			}
			continue
		}
		switch h.chunkStage {
		case 0, 2:
			eol := bytes.Index(data, []byte("\r\n"))
			if eol < 0 {
				if len(data) > 4096 {
					return msgs, false
				}
				goto keep
			}
			line := data[:eol]
			data = data[eol+2:]
			if h.chunkStage == 2 {
				if len(line) == 0 {
					h.inBody, h.chunked, h.chunkStage = false, false, 0
				}
				continue
			}
			if i := bytes.IndexByte(line, ';'); i >= 0 {
				line = line[:i]
			}
			n, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
			if err != nil || n < 0 {
				return msgs, false
			}
			if n == 0 {
				h.chunkStage = 2
			} else {
				h.left, h.chunkStage = n+2, 1
			}
		case 1:
			n := min(int64(len(data)), h.left)
			h.left -= n
			data = data[n:]
			if h.left == 0 {
				h.chunkStage = 0
			}
		}
	}
keep:
	if len(data) == 0 {
		f.tail = f.tail[:0]
	} else if len(f.tail) == 0 || &data[0] != &f.tail[0] {
		f.tail = append(f.tail[:0], data...)
	}
	return msgs, true
}

// head takes a message's head (its start line and headers, each ending in
// CRLF) and sets up its body; counted is false for a 1xx response.
func (h *httpState) head(head []byte, leg Leg) (counted, ok bool) {
	lines := bytes.Split(head[:len(head)-2], []byte("\r\n"))
	start := lines[0]
	status := 0
	if leg == Reply {
		parts := bytes.SplitN(start, []byte(" "), 3)
		if len(parts) < 2 || !bytes.HasPrefix(parts[0], []byte("HTTP/1.")) {
			return false, false
		}
		var err error
		if status, err = strconv.Atoi(string(parts[1])); err != nil {
			return false, false
		}
		if status == 101 {
			return false, false // switching protocols: no longer HTTP/1
		}
		if status < 200 {
			return false, true
		}
	} else if !bytes.Contains(start, []byte(" HTTP/1.")) {
		return false, false
	}
	length, chunked := int64(-1), false
	for _, l := range lines[1:] {
		k, v, found := bytes.Cut(l, []byte(":"))
		if !found {
			return false, false
		}
		v = bytes.TrimSpace(v)
		switch {
		case bytes.EqualFold(k, []byte("Content-Length")):
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil || n < 0 {
				return false, false
			}
			length = n
		case bytes.EqualFold(k, []byte("Transfer-Encoding")):
			chunked = bytes.Contains(bytes.ToLower(v), []byte("chunked"))
		}
	}
	switch {
	case status == 204 || status == 304:
	case chunked:
		h.inBody, h.chunked, h.chunkStage = true, true, 0
	case length > 0:
		h.inBody, h.left = true, length
	case length < 0 && leg == Reply:
		h.untilClose = true
	}
	return true, true
}

// h2State follows an HTTP/2 leg frame by frame, and the gRPC messages in
// each stream's DATA frames (a length-prefixed message: 1 flag byte, 4
// length bytes, the message).
type h2State struct {
	preface bool // the request leg's preface is behind
	streams map[uint32]*grpcStream
}

type grpcStream struct {
	hdr  [5]byte
	hdrN int
	left uint32
}

// feedH2 counts the gRPC messages that end in b. false: not HTTP/2.
func (f *framer) feedH2(b []byte, leg Leg) (int, bool) {
	h := &f.h2
	data := b
	if len(f.tail) > 0 {
		f.tail = append(f.tail, b...)
		data = f.tail
	}
	msgs := 0
	if leg == Request && !h.preface {
		if len(data) < len(h2Preface) {
			goto keep
		}
		if !bytes.HasPrefix(data, []byte(h2Preface)) {
			return 0, false
		}
		data = data[len(h2Preface):]
		h.preface = true
	}
	for len(data) >= 9 {
		n := int(data[0])<<16 | int(data[1])<<8 | int(data[2])
		if len(data) < 9+n {
			break
		}
		typ, flags := data[3], data[4]
		id := binary.BigEndian.Uint32(data[5:9]) & 0x7fffffff
		payload := data[9 : 9+n]
		data = data[9+n:]
		if typ != 0 { // only DATA frames carry messages
			if typ == 3 { // RST_STREAM
				delete(h.streams, id)
			}
			continue
		}
		if flags&0x8 != 0 { // PADDED
			if len(payload) == 0 || int(payload[0]) >= len(payload) {
				return msgs, false
			}
			payload = payload[1 : len(payload)-int(payload[0])]
		}
		if h.streams == nil {
			h.streams = map[uint32]*grpcStream{}
		}
		st := h.streams[id]
		if st == nil {
			if len(h.streams) > 4096 {
				return msgs, false
			}
			st = &grpcStream{}
			h.streams[id] = st
		}
		for len(payload) > 0 {
			if st.left == 0 {
				k := copy(st.hdr[st.hdrN:], payload)
				st.hdrN += k
				payload = payload[k:]
				if st.hdrN < 5 {
					break
				}
				st.hdrN = 0
				st.left = binary.BigEndian.Uint32(st.hdr[1:5])
				if st.left == 0 {
					msgs++
				}
				continue
			}
			k := min(uint32(len(payload)), st.left)
			st.left -= k
			payload = payload[k:]
			if st.left == 0 {
				msgs++
			}
		}
		if flags&0x1 != 0 { // END_STREAM
			delete(h.streams, id)
		}
	}
	if len(data) > 1<<24+9 {
		return msgs, false
	}
keep:
	if len(data) == 0 {
		f.tail = f.tail[:0]
	} else if len(f.tail) == 0 || &data[0] != &f.tail[0] {
		f.tail = append(f.tail[:0], data...)
	}
	return msgs, true
}
