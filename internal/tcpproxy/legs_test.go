package tcpproxy

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// arrival is a line a recording server received, and when.
type arrival struct {
	conn int
	line string
	at   time.Time
}

// recorder is a line echo server that records every line it receives:
// the server's own record of what the network delivered.
type recorder struct {
	addr string
	mu   sync.Mutex
	got  []arrival
}

func newRecorder(t *testing.T) *recorder {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	r := &recorder{addr: ln.Addr().String()}
	go func() {
		for id := 0; ; id++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					l, err := br.ReadString('\n')
					if err != nil {
						return
					}
					r.mu.Lock()
					r.got = append(r.got, arrival{conn: id, line: l, at: time.Now()})
					r.mu.Unlock()
					c.Write([]byte(l))
				}
			}()
		}
	}()
	return r
}

func (r *recorder) lines() []arrival {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]arrival(nil), r.got...)
}

// waitFor polls cond until it holds or 10 s pass (a bound on a loaded
// machine, never a timing under test).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
	}
}

func dialT(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestLoseOneLeg: a loss on the request leg keeps the request from the
// server; on the reply leg the server gets (and applies) the request and
// the client never sees the answer. Either way the other leg is untouched,
// the connection stays open through the loss, the record names the bytes
// dropped on that leg only, and the connection that lost them is reset
// when the loss ends while one that lost nothing goes on.
func TestLoseOneLeg(t *testing.T) {
	for _, leg := range []Leg{Request, Reply} {
		t.Run(leg.String(), func(t *testing.T) {
			srv := newRecorder(t)
			p, err := New(srv.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			c, idle := dialT(t, p.Addr()), dialT(t, p.Addr())
			if _, err := roundTrip(idle, 5*time.Second); err != nil {
				t.Fatal(err)
			}
			p.Lose(leg, true)
			c.Write([]byte("lost?\n"))
			if leg == Reply {
				waitFor(t, "the server receives the request across a reply loss", func() bool {
					return len(srv.lines()) == 2
				})
			}
			waitFor(t, "the proxy drops the chunk", func() bool { return p.Counts().Dropped[leg] == 6 })
			// Still open: nothing was said to the client.
			c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			if _, err := c.Read(make([]byte, 16)); !isTimeout(err) {
				t.Fatalf("during the loss the client read %v; want silence (a timeout)", err)
			}
			p.Lose(leg, false)
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			if n, err := c.Read(make([]byte, 16)); err == nil {
				t.Fatalf("the connection that lost bytes read %d bytes after the loss; want it reset", n)
			}
			if _, err := roundTrip(idle, 5*time.Second); err != nil {
				t.Errorf("a connection that lost nothing did not survive the loss: %v", err)
			}
			got := srv.lines()
			wantServer := 2 // the idle connection's two pings
			if leg == Reply {
				wantServer = 3 // and the request whose reply was lost
			}
			if len(got) != wantServer {
				t.Errorf("the server received %d lines, want %d: %v", len(got), wantServer, got)
			}
			n := p.Counts()
			other := Reply
			if leg == Reply {
				other = Request
			}
			if n.Dropped[leg] != 6 || n.Dropped[other] != 0 {
				t.Errorf("dropped %v, want 6 bytes on the %s leg only", n.Dropped, leg)
			}
			var loss []Event
			for _, e := range p.Events() {
				if e.Fault == FaultLoss {
					loss = append(loss, e)
				}
			}
			if len(loss) != 1 || loss[0].Leg != leg || loss[0].Bytes != 6 || loss[0].Chunks != 1 || loss[0].Reset != 1 {
				t.Fatalf("loss records %+v; want one on the %s leg, 6 bytes in 1 chunk, 1 connection reset", loss, leg)
			}
			e := loss[0]
			if e.First.Before(e.Start) || e.End.Before(e.Last) || e.End.IsZero() {
				t.Errorf("loss record out of order: start %v first %v last %v end %v", e.Start, e.First, e.Last, e.End)
			}
		})
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestBlackholeNewConnection: under a loss on both legs a connection made
// during it carries nothing, and is reset when it ends.
func TestBlackholeNewConnection(t *testing.T) {
	srv := newRecorder(t)
	p, err := New(srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.Lose(Request, true)
	p.Lose(Reply, true)
	c := dialT(t, p.Addr())
	c.Write([]byte("x\n"))
	waitFor(t, "the chunk dropped", func() bool { return p.Counts().Dropped[Request] == 2 })
	p.Lose(Request, false)
	p.Lose(Reply, false)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(make([]byte, 4)); err == nil {
		t.Fatal("the connection that lost its request was not reset")
	}
	if got := srv.lines(); len(got) != 0 {
		t.Errorf("the server received %v through a blackhole", got)
	}
	if _, err := roundTrip(dialT(t, p.Addr()), 5*time.Second); err != nil {
		t.Errorf("after the blackhole: %v", err)
	}
}

// TestLegDelays: a delay on one leg holds that leg's bytes at least that
// long and leaves the other alone; the two legs take different delays.
// Only lower bounds are asserted (the proxy cannot deliver early; a loaded
// machine may deliver late), with the record of what each delay held.
func TestLegDelays(t *testing.T) {
	srv := newRecorder(t)
	p, err := New(srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	const up, down = 150 * time.Millisecond, 60 * time.Millisecond
	p.SetLegDelay(Request, up)
	p.SetLegDelay(Reply, down)
	c := dialT(t, p.Addr())
	sent := time.Now()
	c.Write([]byte("slow\n"))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	got := srv.lines()
	if len(got) != 1 {
		t.Fatalf("server got %v", got)
	}
	if d := got[0].at.Sub(sent); d < up {
		t.Errorf("the request reached the server %v after it was sent; the request leg's delay is %v", d, up)
	}
	if d := back.Sub(got[0].at); d < down {
		t.Errorf("the reply reached the client %v after the server sent it; the reply leg's delay is %v", d, down)
	}
	waitFor(t, "both delays recorded", func() bool {
		n := 0
		for _, e := range p.Events() {
			if e.Chunks == 1 {
				n++
			}
		}
		return n == 2
	})
	p.SetLegDelay(Request, 0)
	p.SetLegDelay(Reply, 0)
	byLeg := map[Leg]Event{}
	for _, e := range p.Events() {
		byLeg[e.Leg] = e
	}
	if e := byLeg[Request]; e.Fault != FaultDelay || e.Amount != up || e.Chunks != 1 || e.MaxHeld < up || e.End.IsZero() {
		t.Errorf("request-leg record %+v", e)
	}
	if e := byLeg[Reply]; e.Fault != FaultDelay || e.Amount != down || e.Chunks != 1 || e.MaxHeld < down {
		t.Errorf("reply-leg record %+v", e)
	}
}

// TestDelayReorders: what a delay held on one connection is overtaken by
// what another connection of the client sends after the delay is lifted;
// within each connection the order is kept. The record counts it.
func TestDelayReorders(t *testing.T) {
	srv := newRecorder(t)
	p, err := New(srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	a, b := dialT(t, p.Addr()), dialT(t, p.Addr())
	p.SetJitter(Request, 0)
	p.SetLegDelay(Request, 300*time.Millisecond)
	a.Write([]byte("a1\n"))
	waitFor(t, "a1 read by the proxy", func() bool { return p.Counts().Bytes[Request] == 3 })
	a.Write([]byte("a2\n"))
	waitFor(t, "a2 read by the proxy", func() bool { return p.Counts().Bytes[Request] == 6 })
	p.SetLegDelay(Request, 0)
	b.Write([]byte("b1\n"))
	waitFor(t, "all three at the server", func() bool { return len(srv.lines()) == 3 })
	var order []string
	for _, g := range srv.lines() {
		order = append(order, strings.TrimSpace(g.line))
	}
	if strings.Join(order, ",") != "b1,a1,a2" {
		t.Errorf("the server received %v; want b1 (sent last, undelayed) first, then a1, a2 in their order", order)
	}
}

// TestJitterKeepsStreamOrder: jitter never reorders a connection's own
// bytes, and counts the overtakings it makes across connections.
func TestJitterKeepsStreamOrder(t *testing.T) {
	srv := newRecorder(t)
	p, err := New(srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	conns := []net.Conn{dialT(t, p.Addr()), dialT(t, p.Addr()), dialT(t, p.Addr())}
	p.SetJitter(Request, 40*time.Millisecond)
	const each = 20
	var sent int64
	for i := 0; i < each; i++ {
		for j, c := range conns {
			line := fmt.Sprintf("%d %d\n", j, i)
			c.Write([]byte(line))
			sent += int64(len(line))
			waitFor(t, "the proxy read the line", func() bool { return p.Counts().Bytes[Request] == sent })
		}
	}
	waitFor(t, "every line at the server", func() bool { return len(srv.lines()) == each*len(conns) })
	p.SetJitter(Request, 0)
	next := map[string]int{}
	for _, g := range srv.lines() {
		var j, i int
		fmt.Sscanf(g.line, "%d %d", &j, &i)
		if k := fmt.Sprint(j); next[k] != i {
			t.Fatalf("connection %d delivered line %d when %d was next: a stream was reordered", j, i, next[k])
		}
		next[fmt.Sprint(j)]++
	}
	var ev Event
	for _, e := range p.Events() {
		if e.Fault == FaultJitter {
			ev = e
		}
	}
	if ev.Chunks != each*int64(len(conns)) || ev.End.IsZero() {
		t.Errorf("jitter record %+v; want %d chunks, ended", ev, each*len(conns))
	}
	t.Logf("jitter: %d of %d chunks overtaken", ev.Overtaken, ev.Chunks)
}

// TestHoldDeliversLate: a held reply leg keeps the server's answer until
// the hold ends, then delivers it on the same open connection.
func TestHoldDeliversLate(t *testing.T) {
	srv := newRecorder(t)
	p, err := New(srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c := dialT(t, p.Addr())
	p.Hold(Reply, true)
	c.Write([]byte("wait\n"))
	waitFor(t, "the server answered", func() bool { return len(srv.lines()) == 1 })
	waitFor(t, "the answer is held", func() bool {
		for _, e := range p.Events() {
			if e.Fault == FaultHold && e.Chunks == 1 {
				return true
			}
		}
		return false
	})
	p.Hold(Reply, false)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	l, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || l != "wait\n" {
		t.Fatalf("after the hold: %q, %v", l, err)
	}
	got := time.Now()
	ev := p.Events()[0]
	if ev.Fault != FaultHold || ev.Leg != Reply || got.Before(ev.End) || ev.Bytes != 5 {
		t.Errorf("hold record %+v; the answer came at %v", ev, got)
	}
}

// redisServer starts a redis-server on a free port for the test, or skips
// when none is installed.
func redisServer(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed (apt-get install redis-server)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	waitFor(t, "redis-server listening", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return addr
}

// resp encodes a command as RESP.
func resp(args ...string) []byte {
	s := fmt.Sprintf("*%d\r\n", len(args))
	for _, a := range args {
		s += fmt.Sprintf("$%d\r\n%s\r\n", len(a), a)
	}
	return []byte(s)
}

// readReply reads one RESP reply.
func readReply(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	var buf []byte
	for {
		if n, ok := respValue(buf, 0); ok {
			return string(buf[:n])
		} else if n < 0 {
			t.Fatalf("not RESP: %q", buf)
		}
		b, err := r.ReadByte()
		if err != nil {
			t.Fatalf("reading a reply: %v (so far %q)", err, buf)
		}
		buf = append(buf, b)
	}
}

// TestRESPCountsAndDuplicate, on a real redis-server: the proxy counts
// exactly the commands a client sent and the replies it got, per leg; a
// duplicate sends an INCR again on a connection of its own, the server
// applies it twice, and the client sees only its own reply.
func TestRESPCountsAndDuplicate(t *testing.T) {
	addr := redisServer(t)
	p, err := New(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c := dialT(t, p.Addr())
	c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	const n = 57
	var sent int64
	for i := 0; i < n; i++ {
		cmd := resp("SET", fmt.Sprintf("k%d", i), strings.Repeat("v", i))
		sent += int64(len(cmd))
		c.Write(cmd)
	}
	for i := 0; i < n; i++ {
		if got := readReply(t, r); got != "+OK\r\n" {
			t.Fatalf("reply %d: %q", i, got)
		}
	}
	cnt := p.Counts()
	if cnt.Messages != [2]int64{n, n} || cnt.Bytes[Request] != sent || cnt.Bytes[Reply] != 5*n || cnt.Unframed != 0 || cnt.Protocol != "resp" {
		t.Fatalf("counts %+v; want %d requests and replies, %d bytes sent, %d back", cnt, n, sent, 5*n)
	}

	p.Duplicate(true, 0)
	c.Write(resp("INCR", "ctr"))
	if got := readReply(t, r); got != ":1\r\n" {
		t.Fatalf("the client's own reply to INCR: %q, want :1", got)
	}
	waitFor(t, "the copy answered", func() bool { return p.Counts().Duplicates == 1 })
	p.Duplicate(false, 0)
	c.Write(resp("GET", "ctr"))
	if got := readReply(t, r); got != "$1\r\n2\r\n" {
		t.Errorf("GET ctr after a duplicated INCR: %q; want 2 (the server applied the copy)", got)
	}
	c.Write(resp("INCR", "ctr"))
	if got := readReply(t, r); got != ":3\r\n" {
		t.Errorf("INCR after the duplicate ended: %q; want :3 (no copy)", got)
	}
	var dup Event
	for _, e := range p.Events() {
		if e.Fault == FaultDuplicate {
			dup = e
		}
	}
	if len(dup.Copies) != 1 || dup.Copies[0].Command != "INCR" || dup.Copies[0].Reply != ":2\r\n" || dup.End.IsZero() {
		t.Errorf("duplicate record %+v; want one INCR copy answered :2", dup)
	}
	if cnt := p.Counts(); cnt.Messages != [2]int64{n + 3, n + 3} {
		t.Errorf("counts after the duplicate %v; the copy is not the client's request", cnt.Messages)
	}
}

// TestDuplicateNotFramed: on a protocol the proxy does not frame a
// duplicate copies nothing, and the connection is counted unframed.
func TestDuplicateNotFramed(t *testing.T) {
	srv := newRecorder(t)
	p, err := New(srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.Duplicate(true, 0)
	c := dialT(t, p.Addr())
	if _, err := roundTrip(c, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	p.Duplicate(false, 0)
	if got := srv.lines(); len(got) != 1 {
		t.Errorf("the server got %v; want the one line, no copy", got)
	}
	if n := p.Counts(); n.Duplicates != 0 || n.Unframed != 1 || n.Messages != [2]int64{} || n.Protocol != "unframed" {
		t.Errorf("counts %+v", n)
	}
}

// TestRESPFramerSplits: the framer counts the same messages however the
// stream is cut into chunks, including RESP3 maps, attributes, nulls and
// pushes (which answer no request).
func TestRESPFramerSplits(t *testing.T) {
	stream := "+OK\r\n$-1\r\n*2\r\n$3\r\nfoo\r\n:12\r\n%1\r\n+a\r\n*1\r\n_\r\n|1\r\n+ttl\r\n:3\r\n$5\r\nhe\r\nl\r\n>2\r\n+msg\r\n+x\r\n-ERR no\r\n*-1\r\n"
	const want = 7
	for step := 1; step <= len(stream); step++ {
		var proto atomic.Uint32
		proto.Store(protoRESP)
		f := framer{proto: &proto}
		got := 0
		for i := 0; i < len(stream); i += step {
			m, _, gaveUp := f.feed([]byte(stream[i:min(i+step, len(stream))]), Reply, false)
			if gaveUp {
				t.Fatalf("step %d: gave up at %d", step, i)
			}
			got += m
		}
		if got != want {
			t.Fatalf("step %d: %d replies, want %d", step, got, want)
		}
	}
	if n, _ := respValue([]byte("?what\r\n"), 0); n >= 0 {
		t.Error("respValue took a line that is not RESP")
	}
}

// TestCopyOnlyOutsideTransactions: the framer copies a plain command, not
// one queued inside MULTI, not a connection's setup, and nothing once the
// connection subscribes; AUTH and SELECT are kept to replay.
func TestCopyOnlyOutsideTransactions(t *testing.T) {
	var proto atomic.Uint32
	f := framer{proto: &proto}
	var stream []byte
	for _, c := range [][]string{
		{"CLIENT", "SETINFO", "lib-name", "x"}, {"SELECT", "2"}, {"SET", "a", "1"},
		{"MULTI"}, {"SET", "b", "1"}, {"EXEC"}, {"incr", "c"},
		{"SUBSCRIBE", "ch"}, {"SET", "d", "1"},
	} {
		stream = append(stream, resp(c...)...)
	}
	msgs, copies, gaveUp := f.feed(stream, Request, true)
	if msgs != 9 || gaveUp {
		t.Fatalf("framed %d commands (gave up: %v), want 9", msgs, gaveUp)
	}
	var names []string
	for _, c := range copies {
		names = append(names, string(respArg(c, 0))+" "+string(respArg(c, 1)))
	}
	if strings.Join(names, ",") != "SET a,incr c" {
		t.Errorf("copied %v; want SET a and incr c only", names)
	}
	if len(f.setup) != 1 || string(respArg(f.setup[0], 0)) != "SELECT" {
		t.Errorf("setup kept %q; want the SELECT", f.setup)
	}
}
