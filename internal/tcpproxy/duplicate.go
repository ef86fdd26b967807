package tcpproxy

import (
	"bytes"
	"time"
)

// Duplicate sends every request again (true) while it lasts, after, on a
// connection of its own to the server, and stops (false). The original
// goes on as usual and its client sees only its own reply; the copy's reply
// is recorded (Event.Copies) and thrown away.
//
// TCP never hands an application the same bytes twice, so at a socket a
// duplicate request is what a retry does: the same command again, on
// another connection, late. The proxy can only cut a request out of a
// stream it frames: RESP (Redis, Valkey) commands. Inside MULTI, once a
// connection subscribes or monitors, and for the commands that set a
// connection up, nothing is copied; the copy's connection replays the
// original's AUTH, HELLO and SELECT first. On any other protocol a
// duplicate copies nothing, and its record says so (Copies empty) — it
// does not pretend.
func (p *Proxy) Duplicate(on bool, after time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on == p.dupOn.Load() && (!on || after == p.dupAfter) {
		return
	}
	if on {
		p.endLocked(&p.dupEv)
		p.dupEv = p.openLocked(Event{Fault: FaultDuplicate, Leg: Request, Amount: after})
		p.dupAfter = after
	} else {
		p.endLocked(&p.dupEv)
	}
	p.dupOn.Store(on)
}

// duplicate sends cmd again, after replaying setup, on a connection of its
// own, and records it under event ev.
func (p *Proxy) duplicate(setup [][]byte, cmd []byte, ev int) {
	if ev < 0 {
		return
	}
	p.mu.Lock()
	after := p.dupAfter
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.wg.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.wg.Done()
		cp := Copy{Command: string(bytes.ToUpper(respCommand(cmd)))}
		defer func() {
			p.mu.Lock()
			e := &p.events[ev]
			e.Copies = append(e.Copies, cp)
			now := cp.Sent
			if now.IsZero() {
				now = time.Now()
			}
			if e.First.IsZero() {
				e.First = now
			}
			e.Last = now
			e.Chunks++
			e.Bytes += int64(len(cmd))
			e.Messages++
			p.counts.Duplicates++
			p.mu.Unlock()
		}()
		if !p.sleep(after) {
			cp.Err = "the proxy closed before the copy was due"
			return
		}
		c, err := p.Dialer.Dial("tcp", p.target)
		if err != nil {
			cp.Err = err.Error()
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		var out []byte
		for _, s := range setup {
			out = append(out, s...)
		}
		out = append(out, cmd...)
		cp.Sent = time.Now()
		if _, err := c.Write(out); err != nil {
			cp.Err = err.Error()
			return
		}
		// Read the setup's replies and the copy's, the last one recorded.
		var buf []byte
		tmp := make([]byte, 4096)
		for want := len(setup) + 1; want > 0; {
			n, ok := respValue(buf, 0)
			if n < 0 {
				cp.Err = "the server's reply is not RESP"
				return
			}
			if ok {
				if want == 1 {
					cp.Answered = time.Now()
					cp.Reply = string(buf[:min(n, 64)])
				}
				buf = buf[n:]
				want--
				continue
			}
			m, err := c.Read(tmp)
			buf = append(buf, tmp[:m]...)
			if err != nil && m == 0 {
				cp.Err = "no reply: " + err.Error()
				return
			}
		}
	}()
}

// sleep waits d, false when the proxy closed meanwhile.
func (p *Proxy) sleep(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-p.done:
		return false
	}
}
