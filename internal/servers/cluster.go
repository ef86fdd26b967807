package servers

import (
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/internal/tcpproxy"
)

// EtcdMember is one member of an EtcdCluster: its server process (Addr is
// its client address) and the proxy every other member reaches it through.
type EtcdMember struct {
	*Process
	Member string // m1, m2, ...: how fault records name it
	ID     uint64 // etcd's member ID (from its advertised peer URL)
	Peer   *tcpproxy.Proxy
}

// EtcdCluster is an etcd cluster of EtcdProgram processes started here, every
// peer link through a leasecheck proxy, so faults can strike between the
// members (Cut, Isolate, DelayPeers) as well as on them (Stop, Kill,
// Restart).
//
// The peer links: member i listens for peers on a port of its own, and
// advertises (to all, in --initial-cluster) the address of a labelled
// proxy in front of it, so every connection to member i comes through
// proxy i. etcd's rafthttp names the member that opened a connection in
// the X-Server-From header of the request that opens it (a stream's
// dialler reads the stream; a pipeline POST's dialler sends it), so proxy
// i knows which pair a connection belongs to and a cut is per pair: the
// link i–j is cut at proxy i for j's connections and at proxy j for i's.
// Connections without the header — the lease renewals and lookups a
// follower forwards to the leader (leasehttp), the prober's, /version —
// are labelled by the process that holds the dialling socket (Linux's
// /proc: socketOwner), so a cut stops a forwarded renewal too.
type EtcdCluster struct {
	Servers []*EtcdMember
	Version string
	dir     string

	// PinLeader, when set, is the member Settle makes the leader (etcd's
	// MoveLeader): the clients of a run pinned to it talk to the leader,
	// so "isolate the leader" cuts off the member they are connected to.
	PinLeader string

	mu  sync.Mutex
	cut map[[2]int]bool // links cut, i < j
}

// StartEtcdCluster starts an n-member cluster of the installed etcd server
// (EtcdBin): StartEtcdClusterOf(ctx, InstalledEtcd(), n).
func StartEtcdCluster(ctx context.Context, n int) (*EtcdCluster, error) {
	prog, err := InstalledEtcd()
	if err != nil {
		return nil, err
	}
	return StartEtcdClusterOf(ctx, prog, n)
}

// StartEtcdClusterOf starts an n-member etcd cluster, every member a
// process of prog (the installed etcd 3.4, or the embedded 3.7 server as a
// child process: package internal/etcdmember), on free ports of 127.0.0.1,
// each member's data in a temporary directory of the cluster's, and returns
// once every member reports itself healthy (it has a leader). Version is
// what prog --version says. Every flag given is one 3.4 and 3.7 both
// accept with the same meaning, so each server runs on its own defaults:
// heartbeat 100 ms, election timeout 1 s, CheckQuorum on (a leader that
// hears from no majority for an election timeout steps down); pre-vote off
// in 3.4, on from 3.5 (a member cut off and healed does not depose a
// working leader by its higher term).
func StartEtcdClusterOf(ctx context.Context, prog EtcdProgram, n int) (*EtcdCluster, error) {
	return RetryPortTaken(func() (*EtcdCluster, error) { return startEtcdClusterOf(ctx, prog, n) })
}

func startEtcdClusterOf(ctx context.Context, prog EtcdProgram, n int) (*EtcdCluster, error) {
	if n < 1 {
		return nil, errors.New("etcd cluster: at least one member")
	}
	version, err := prog.Version()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "leasecheck-etcd-cluster-")
	if err != nil {
		return nil, err
	}
	c := &EtcdCluster{Version: version, dir: dir, cut: map[[2]int]bool{}}
	fail := func(err error) (*EtcdCluster, error) {
		c.Close()
		return nil, err
	}
	type ports struct{ client, peer int }
	ps := make([]ports, n)
	var initial []string
	free, err := freePorts(2 * n)
	if err != nil {
		return fail(err)
	}
	for i := range ps {
		ps[i].client, ps[i].peer = free[2*i], free[2*i+1]
		px, err := tcpproxy.NewLabeled(hostPort(ps[i].peer), c.peerLabel)
		if err != nil {
			return fail(err)
		}
		m := &EtcdMember{Member: "m" + strconv.Itoa(i+1), Peer: px}
		c.mu.Lock() // the proxies' labellers read Servers
		c.Servers = append(c.Servers, m)
		c.mu.Unlock()
		initial = append(initial, m.Member+"=http://"+px.Addr())
	}
	tb := make([]byte, 4)
	rand.Read(tb)
	token := "leasecheck-" + hex.EncodeToString(tb)
	// Every member's ID, known before any starts (etcd's computeMemberID:
	// the first 8 bytes of SHA-1 over its peer URL and the cluster token),
	// so that the very first connections — a new member asks the others
	// for /members, and keeps that connection for its lease forwards —
	// are labelled; the member list checks it after the start.
	c.mu.Lock()
	for _, m := range c.Servers {
		sum := sha1.Sum([]byte("http://" + m.Peer.Addr() + token))
		m.ID = binary.BigEndian.Uint64(sum[:8])
	}
	c.mu.Unlock()
	for i, m := range c.Servers {
		client := "http://" + hostPort(ps[i].client)
		mdir := filepath.Join(dir, m.Member)
		if err := os.Mkdir(mdir, 0o755); err != nil {
			return fail(err)
		}
		p := &Process{Name: "etcd " + m.Member, Addr: hostPort(ps[i].client)}
		args := []string{"--name", m.Member, "--data-dir", filepath.Join(mdir, "data"),
			"--listen-client-urls", client, "--advertise-client-urls", client,
			"--listen-peer-urls", "http://" + hostPort(ps[i].peer),
			"--initial-advertise-peer-urls", "http://" + m.Peer.Addr(),
			"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-state", "new",
			"--initial-cluster-token", token,
			"--logger", "zap", "--log-outputs", "stderr", "--log-level", "warn"}
		p.newCmd = func() *exec.Cmd {
			cmd := prog.Command(args...)
			cmd.Dir = mdir
			return cmd
		}
		p.ready = etcdHealthy(p, client)
		c.mu.Lock()
		m.Process = p
		c.mu.Unlock()
		if err := p.start(p.newCmd()); err != nil {
			return fail(err)
		}
	}
	// Every member waits for the others to elect a leader: all are started
	// before any is awaited.
	wctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	for _, m := range c.Servers {
		if err := m.waitReady(wctx, 0); err != nil {
			return fail(err)
		}
	}
	mctx, mcancel := context.WithTimeout(ctx, 10*time.Second)
	defer mcancel()
	cli, err := c.client(c.Servers[0].Addr)
	if err != nil {
		return fail(err)
	}
	defer cli.Close()
	ml, err := cli.MemberList(mctx)
	if err != nil {
		return fail(fmt.Errorf("etcd cluster: member list: %w", err))
	}
	for _, m := range c.Servers {
		found := false
		for _, x := range ml.Members {
			found = found || x.ID == m.ID && slices.Contains(x.PeerURLs, "http://"+m.Peer.Addr())
		}
		if !found {
			return fail(fmt.Errorf("etcd cluster: %s (ID %s, peer URL http://%s) is not in the member list %v: the member IDs the proxies label connections with are wrong", m.Member, hexID(m.ID), m.Peer.Addr(), ml.Members))
		}
	}
	return c, nil
}

func hostPort(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

var serverFrom = tcpproxy.HTTPHeader("X-Server-From")

// peerLabel labels a connection to a member's peer proxy with the hex ID
// of the member that dialled it: rafthttp's X-Server-From header, else the
// member whose process holds the dialling socket; "" when neither tells.
func (c *EtcdCluster) peerLabel(conn net.Conn, head []byte) (string, bool) {
	l, done := serverFrom(conn, head)
	if !done || l != "" {
		return l, done
	}
	c.mu.Lock()
	pids := make([]int, len(c.Servers))
	ids := make([]uint64, len(c.Servers))
	for i, m := range c.Servers {
		if m.Process != nil {
			pids[i] = m.Pid()
		}
		ids[i] = m.ID
	}
	c.mu.Unlock()
	if pid := socketOwner(conn.RemoteAddr(), conn.LocalAddr(), pids); pid != 0 {
		for i := range pids {
			if pids[i] == pid && ids[i] != 0 {
				return hexID(ids[i]), true
			}
		}
	}
	return "", true
}

// etcdHealthy is the readiness of an etcd member: /health says true (the
// member has a leader and its raft works).
func etcdHealthy(p *Process, client string) func(ctx context.Context, _ int) error {
	hc := &http.Client{Timeout: time.Second}
	return func(ctx context.Context, _ int) error {
		return p.poll(ctx, func() bool {
			resp, err := hc.Get(client + "/health")
			if err != nil {
				return false
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			return resp.StatusCode == http.StatusOK && strings.Contains(string(b), `"health":"true"`)
		}, "become healthy")
	}
}

func (c *EtcdCluster) client(endpoints ...string) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
}

// Endpoints are the members' client addresses, m1 first.
func (c *EtcdCluster) Endpoints() []string {
	var out []string
	for _, m := range c.Servers {
		out = append(out, m.Addr)
	}
	return out
}

var (
	_ realrun.Cluster  = (*EtcdCluster)(nil)
	_ realrun.Rejoiner = (*EtcdCluster)(nil)
)

// Index is the index of member name ("m2": 1), -1 if none.
func (c *EtcdCluster) Index(name string) int {
	for i, m := range c.Servers {
		if m.Member == name {
			return i
		}
	}
	return -1
}

// EtcdStatus is what one member says of itself (its status API).
type EtcdStatus struct {
	Member   string
	Leader   string // the member it follows or is ("" none)
	Term     uint64 // its raft term
	Index    uint64 // its raft log index
	Answered bool   // false: it did not answer within the timeout
}

// Status asks every member its status (Maintenance.Status), each within
// timeout: a stopped or cut-off member may not answer.
func (c *EtcdCluster) Status(ctx context.Context, timeout time.Duration) []EtcdStatus {
	out := make([]EtcdStatus, len(c.Servers))
	var wg sync.WaitGroup
	for i, m := range c.Servers {
		out[i].Member = m.Member
		wg.Add(1)
		go func() {
			defer wg.Done()
			cli, err := c.client(m.Addr)
			if err != nil {
				return
			}
			defer cli.Close()
			sctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			s, err := cli.Status(sctx, m.Addr)
			if err != nil {
				return
			}
			out[i].Answered, out[i].Term, out[i].Index = true, s.RaftTerm, s.RaftIndex
			for _, x := range c.Servers {
				if x.ID == s.Leader {
					out[i].Leader = x.Member
				}
			}
		}()
	}
	wg.Wait()
	return out
}

// Leader is the member that leads, from the members' own status: among
// those that say they lead, the one of the highest term (an isolated
// leader may not have stepped down yet); "" when none does.
func (c *EtcdCluster) Leader(ctx context.Context) string {
	var leader string
	var term uint64
	for _, s := range c.Status(ctx, time.Second) {
		if s.Answered && s.Leader == s.Member && s.Term >= term {
			leader, term = s.Member, s.Term
		}
	}
	return leader
}

// AwaitLeader waits until a member leads and every member that answers
// agrees on it, or ctx ends.
func (c *EtcdCluster) AwaitLeader(ctx context.Context) (string, error) {
	for {
		st := c.Status(ctx, time.Second)
		leader, agree := "", true
		for _, s := range st {
			if !s.Answered {
				agree = false
				continue
			}
			if leader == "" {
				leader = s.Leader
			}
			agree = agree && s.Leader != "" && s.Leader == leader
		}
		if agree && leader != "" {
			return leader, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("etcd cluster: no leader all members agree on: %v (%v)", st, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// MoveLeader hands leadership to member name (etcd's MoveLeader, asked of
// the current leader) and waits until every member follows it.
func (c *EtcdCluster) MoveLeader(ctx context.Context, name string) error {
	to := c.Index(name)
	if to < 0 {
		return fmt.Errorf("etcd cluster: no member %q", name)
	}
	for attempt := 0; ; attempt++ {
		leader, err := c.AwaitLeader(ctx)
		if err != nil {
			return err
		}
		if leader == name {
			return nil
		}
		cli, err := c.client(c.Servers[c.Index(leader)].Addr)
		if err != nil {
			return err
		}
		mctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err = cli.MoveLeader(mctx, c.Servers[to].ID)
		cancel()
		cli.Close()
		if err != nil && attempt >= 5 {
			return fmt.Errorf("etcd cluster: move leader %s -> %s: %w", leader, name, err)
		}
	}
}

func (c *EtcdCluster) link(i, j int, on bool) {
	if i > j {
		i, j = j, i
	}
	if on {
		c.cut[[2]int{i, j}] = true
	} else {
		delete(c.cut, [2]int{i, j})
	}
	// A partition that refuses (Proxy.RejectFrom): the pair's open
	// connections reset, new ones reset once their dialler is known.
	a, b := c.Servers[i], c.Servers[j]
	a.Peer.RejectFrom(hexID(b.ID), on)
	b.Peer.RejectFrom(hexID(a.ID), on)
}

// hexID is a member ID as rafthttp writes it in X-Server-From.
func hexID(id uint64) string { return strconv.FormatUint(id, 16) }

// Members names the members, m1 first (realrun.Cluster).
func (c *EtcdCluster) Members() []string {
	out := make([]string, len(c.Servers))
	for i, m := range c.Servers {
		out[i] = m.Member
	}
	return out
}

func (c *EtcdCluster) member(name string) (int, error) {
	if i := c.Index(name); i >= 0 {
		return i, nil
	}
	return -1, fmt.Errorf("etcd cluster: no member %q (members: %v)", name, c.Members())
}

// Cut cuts (true) or heals (false) the link between members a and b, both
// ways: every message between them is lost; on heal the connections that
// were cut are reset and rafthttp redials.
func (c *EtcdCluster) Cut(a, b string, on bool) error {
	i, err := c.member(a)
	if err != nil {
		return err
	}
	j, err := c.member(b)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.link(i, j, on)
	return nil
}

// Isolate cuts (heals) every link of member name: a minority of one, the
// others a majority (realrun.Cluster).
func (c *EtcdCluster) Isolate(name string, on bool) error {
	i, err := c.member(name)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for j := range c.Servers {
		if j != i {
			c.link(i, j, on)
		}
	}
	return nil
}

// Bridge cuts (heals) the members other than name into two halves (in
// member order) that cannot reach each other; name reaches both
// (realrun.Cluster). Of three members: the two others cut from each other.
func (c *EtcdCluster) Bridge(name string, on bool) error {
	i, err := c.member(name)
	if err != nil {
		return err
	}
	var others []int
	for j := range c.Servers {
		if j != i {
			others = append(others, j)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	half := len(others) / 2
	for _, a := range others[:half] {
		for _, b := range others[half:] {
			c.link(a, b, on)
		}
	}
	return nil
}

// DelayPeers adds d to every chunk on member name's links to the others
// (each connection passes one proxy, so once per chunk); 0 ends it
// (realrun.Cluster).
func (c *EtcdCluster) DelayPeers(name string, d time.Duration) error {
	i, err := c.member(name)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for j, o := range c.Servers {
		if j != i {
			c.Servers[i].Peer.SetDelayFrom(hexID(o.ID), d)
			o.Peer.SetDelayFrom(hexID(c.Servers[i].ID), d)
		}
	}
	return nil
}

// Stop freezes member name's process (SIGSTOP) (realrun.Cluster).
func (c *EtcdCluster) Stop(name string) error {
	i, err := c.member(name)
	if err != nil {
		return err
	}
	return c.Servers[i].Process.Stop()
}

// Cont resumes it (realrun.Cluster).
func (c *EtcdCluster) Cont(name string) error {
	i, err := c.member(name)
	if err != nil {
		return err
	}
	return c.Servers[i].Process.Cont()
}

// Restart kills member name and starts it on its data after down,
// returning once it is healthy again (realrun.Cluster).
func (c *EtcdCluster) Restart(ctx context.Context, name string, down time.Duration) error {
	i, err := c.member(name)
	if err != nil {
		return err
	}
	return c.Servers[i].Process.Restart(ctx, down)
}

// Settle heals every link and delay, resumes every member, restarts any
// that is not running, waits until every member follows one leader and,
// when PinLeader names a member, hands it the leadership
// (realrun.Cluster: before every run).
func (c *EtcdCluster) Settle(ctx context.Context) error {
	c.Heal()
	for _, m := range c.Servers {
		m.Process.Cont()
		if !m.Process.Running() {
			if err := m.Process.Restart(ctx, 0); err != nil {
				return err
			}
		}
	}
	if c.PinLeader != "" {
		return c.MoveLeader(ctx, c.PinLeader)
	}
	_, err := c.AwaitLeader(ctx)
	return err
}

// AwaitRejoined waits until every member answers Status and all name the
// same leader (realrun.Rejoiner: the next cluster fault waits for it).
func (c *EtcdCluster) AwaitRejoined(ctx context.Context) error {
	_, err := c.AwaitLeader(ctx)
	return err
}

// Heal heals every cut and ends every delay.
func (c *EtcdCluster) Heal() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for l := range c.cut {
		c.link(l[0], l[1], false)
	}
	for i, m := range c.Servers {
		for j, o := range c.Servers {
			if i != j {
				m.Peer.SetDelayFrom(hexID(o.ID), 0)
			}
		}
	}
}

// Close kills every member (Process.Close: SIGCONT, SIGTERM, SIGKILL after
// 10 s), closes the proxies and removes the cluster's directory.
func (c *EtcdCluster) Close() error {
	var wg sync.WaitGroup
	for _, m := range c.Servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if m.Process != nil {
				m.Process.Close()
			}
			m.Peer.Close()
		}()
	}
	wg.Wait()
	return os.RemoveAll(c.dir)
}

// Dir is the cluster's temporary directory (every member's data), removed
// by Close.
func (c *EtcdCluster) Dir() string { return c.dir }
