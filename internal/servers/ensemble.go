package servers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/internal/tcpproxy"
)

// ZooKeeperEnsemble is a ZooKeeper ensemble of servers started here
// (org.apache.zookeeper.server.quorum.QuorumPeerMain), every link between
// two servers through leasecheck's proxies, so faults can strike between
// them as well as on them.
//
// The links: each server reads a zoo.cfg of its own, which names itself
// at its real quorum and election ports and every other server j at the
// ports of two proxies of its own in front of j's (links[i][j]): what i
// sends to j, or j to i on a connection i opened, passes them. ZooKeeper
// keeps one connection per pair (the server with the larger id dials), so
// cutting the pair i–j rejects at i's proxies to j and j's to i.
type ZooKeeperEnsemble struct {
	Servers []*EnsembleServer
	dir     string

	mu    sync.Mutex
	links [][][]*tcpproxy.Proxy // links[i][j]: server i's proxies to j (quorum, election)
	cut   map[[2]int]bool
}

// EnsembleServer is one server of a ZooKeeperEnsemble: its process (Addr is
// its client address).
type EnsembleServer struct {
	*Process
	Member string // m1, m2, ...: how fault records name it
	ID     int    // its myid
}

var (
	_ realrun.Cluster  = (*ZooKeeperEnsemble)(nil)
	_ realrun.Rejoiner = (*ZooKeeperEnsemble)(nil)
)

// StartZooKeeperEnsemble starts an n-server ensemble on free ports of
// 127.0.0.1, each server's data in a temporary directory of the
// ensemble's, and returns once every server serves (srvr says it leads or
// follows). The timing is StartZooKeeper's (tick 100 ms, sessions of 200 ms
// to 60 s), with initLimit 30 ticks (3 s for a follower to sync with a new
// leader, which also bounds how long an election that chose a leader the
// others cannot follow holds everyone up) and syncLimit 10 ticks: a follower that hears nothing from its
// leader for 1 s, or a leader that hears from no quorum for that long,
// gives up and elects again (etcd's election timeout, for comparison).
func StartZooKeeperEnsemble(ctx context.Context, n int) (*ZooKeeperEnsemble, error) {
	return RetryPortTaken(func() (*ZooKeeperEnsemble, error) { return startZooKeeperEnsemble(ctx, n) })
}

func startZooKeeperEnsemble(ctx context.Context, n int) (*ZooKeeperEnsemble, error) {
	if n < 2 {
		return nil, errors.New("zookeeper ensemble: at least two servers")
	}
	command, err := zooKeeperCommand()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "leasecheck-zk-ensemble-")
	if err != nil {
		return nil, err
	}
	e := &ZooKeeperEnsemble{dir: dir, cut: map[[2]int]bool{}}
	fail := func(err error) (*ZooKeeperEnsemble, error) {
		e.Close()
		return nil, err
	}
	type ports struct{ client, quorum, election int }
	ps := make([]ports, n)
	free, err := freePorts(3 * n)
	if err != nil {
		return fail(err)
	}
	for i := range ps {
		ps[i] = ports{free[3*i], free[3*i+1], free[3*i+2]}
	}
	e.links = make([][][]*tcpproxy.Proxy, n)
	for i := range e.links {
		e.links[i] = make([][]*tcpproxy.Proxy, n)
		for j := range e.links[i] {
			if i == j {
				continue
			}
			q, err := tcpproxy.New(hostPort(ps[j].quorum))
			if err != nil {
				return fail(err)
			}
			el, err := tcpproxy.New(hostPort(ps[j].election))
			if err != nil {
				q.Close()
				return fail(err)
			}
			e.links[i][j] = []*tcpproxy.Proxy{q, el}
		}
	}
	for i := range ps {
		sdir := filepath.Join(dir, "m"+strconv.Itoa(i+1))
		data := filepath.Join(sdir, "data")
		if err := os.MkdirAll(data, 0o755); err != nil {
			return fail(err)
		}
		if err := os.WriteFile(filepath.Join(data, "myid"), []byte(strconv.Itoa(i+1)+"\n"), 0o644); err != nil {
			return fail(err)
		}
		var servers []string
		for j := range ps {
			q, el := ps[j].quorum, ps[j].election
			if j != i {
				q, el = portOf(e.links[i][j][0].Addr()), portOf(e.links[i][j][1].Addr())
			}
			servers = append(servers, fmt.Sprintf("server.%d=127.0.0.1:%d:%d", j+1, q, el))
		}
		conf := fmt.Sprintf(`tickTime=%d
initLimit=30
syncLimit=10
dataDir=%s
clientPort=%d
clientPortAddress=127.0.0.1
minSessionTimeout=%d
maxSessionTimeout=%d
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=srvr,ruok
forceSync=no
cnxTimeout=1000
%s
`, ZooKeeperTick.Milliseconds(), data, ps[i].client, ZooKeeperMinSessionTimeout.Milliseconds(), ZooKeeperMaxSessionTimeout.Milliseconds(),
			strings.Join(servers, "\n"))
		cfg := filepath.Join(sdir, "zoo.cfg")
		if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
			return fail(err)
		}
		p := &Process{Name: "zookeeper m" + strconv.Itoa(i+1), Addr: hostPort(ps[i].client)}
		p.newCmd = func() *exec.Cmd { return command("org.apache.zookeeper.server.quorum.QuorumPeerMain", cfg, sdir) }
		p.ready = func(ctx context.Context, _ int) error {
			return p.poll(ctx, func() bool {
				_, ok := zkMode(p.Addr)
				return ok
			}, "serve requests (lead or follow)")
		}
		s := &EnsembleServer{Process: p, Member: "m" + strconv.Itoa(i+1), ID: i + 1}
		e.Servers = append(e.Servers, s)
		if err := p.start(p.newCmd()); err != nil {
			return fail(err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 120*time.Second)
	defer cancel()
	for _, s := range e.Servers {
		if err := s.waitReady(wctx, 0); err != nil {
			return fail(err)
		}
	}
	return e, nil
}

func portOf(addr string) int {
	i := strings.LastIndexByte(addr, ':')
	p, _ := strconv.Atoi(addr[i+1:])
	return p
}

var (
	zkModeRE = regexp.MustCompile(`Mode: (\w+)`)
	zkZxidRE = regexp.MustCompile(`Zxid: 0x([0-9a-f]+)`)
)

// ZooKeeperMode asks a server its mode (srvr): "leader" or "follower"
// with its zxid's epoch ("leader 3"); false when it does not serve.
func ZooKeeperMode(addr string) (string, bool) { return zkMode(addr) }

func zkMode(addr string) (string, bool) {
	out, err := FourLetterWord(addr, "srvr", time.Second)
	if err != nil {
		return "", false
	}
	return zkModeOf(out)
}

// zkModeOf reads zkMode's answer from srvr's output.
func zkModeOf(out string) (string, bool) {
	m := zkModeRE.FindStringSubmatch(out)
	if m == nil || (m[1] != "leader" && m[1] != "follower") {
		return "", false
	}
	return m[1] + " " + epochOf(out), true
}

func epochOf(srvr string) string {
	z := zkZxidRE.FindStringSubmatch(srvr)
	if z == nil {
		return "0"
	}
	v, _ := strconv.ParseUint(z[1], 16, 64)
	return strconv.FormatUint(v>>32, 10)
}

// Members names the servers, m1 first (realrun.Cluster).
func (e *ZooKeeperEnsemble) Members() []string {
	out := make([]string, len(e.Servers))
	for i, s := range e.Servers {
		out[i] = s.Member
	}
	return out
}

// Endpoints are the servers' client addresses, m1 first.
func (e *ZooKeeperEnsemble) Endpoints() []string {
	var out []string
	for _, s := range e.Servers {
		out = append(out, s.Addr)
	}
	return out
}

// Dir is the ensemble's temporary directory, removed by Close.
func (e *ZooKeeperEnsemble) Dir() string { return e.dir }

func (e *ZooKeeperEnsemble) index(name string) (int, error) {
	for i, s := range e.Servers {
		if s.Member == name {
			return i, nil
		}
	}
	return -1, fmt.Errorf("zookeeper ensemble: no server %q (servers: %v)", name, e.Members())
}

// Leader is the server that says it leads (srvr "Mode: leader"), of the
// highest epoch when an isolated one has not noticed yet; "" when none
// does (realrun.Cluster).
func (e *ZooKeeperEnsemble) Leader(ctx context.Context) string {
	type res struct {
		mode string
		ok   bool
	}
	rs := make([]res, len(e.Servers))
	var wg sync.WaitGroup
	for i, s := range e.Servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rs[i].mode, rs[i].ok = zkMode(s.Addr)
		}()
	}
	wg.Wait()
	leader, epoch := "", int64(-1)
	for i, r := range rs {
		if m, ep, _ := strings.Cut(r.mode, " "); r.ok && m == "leader" {
			if n, _ := strconv.ParseInt(ep, 10, 64); n > epoch {
				leader, epoch = e.Servers[i].Member, n
			}
		}
	}
	return leader
}

func (e *ZooKeeperEnsemble) link(i, j int, on bool) {
	if i > j {
		i, j = j, i
	}
	if on {
		e.cut[[2]int{i, j}] = true
	} else {
		delete(e.cut, [2]int{i, j})
	}
	// A partition that refuses (Proxy.Reject): open connections reset,
	// new ones reset as they arrive, so each side's TCP sees the cut at
	// once and the majority elects among itself (a blackhole that accepts
	// and passes nothing left FastLeaderElection sending into connections
	// that looked alive, for more than 30 s).
	for _, p := range append(append([]*tcpproxy.Proxy(nil), e.links[i][j]...), e.links[j][i]...) {
		p.Reject(on)
	}
}

// Isolate cuts (heals) every link of server name (realrun.Cluster).
func (e *ZooKeeperEnsemble) Isolate(name string, on bool) error {
	i, err := e.index(name)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for j := range e.Servers {
		if j != i {
			e.link(i, j, on)
		}
	}
	return nil
}

// Bridge cuts (heals) the servers other than name into two halves that
// cannot reach each other; name reaches both (realrun.Cluster).
func (e *ZooKeeperEnsemble) Bridge(name string, on bool) error {
	i, err := e.index(name)
	if err != nil {
		return err
	}
	var others []int
	for j := range e.Servers {
		if j != i {
			others = append(others, j)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	half := len(others) / 2
	for _, a := range others[:half] {
		for _, b := range others[half:] {
			e.link(a, b, on)
		}
	}
	return nil
}

// DelayPeers delays every chunk on server name's links to the others by d
// (0: no more) (realrun.Cluster).
func (e *ZooKeeperEnsemble) DelayPeers(name string, d time.Duration) error {
	i, err := e.index(name)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for j := range e.Servers {
		if j == i {
			continue
		}
		for _, p := range append(append([]*tcpproxy.Proxy(nil), e.links[i][j]...), e.links[j][i]...) {
			p.SetDelay(d)
		}
	}
	return nil
}

// Stop freezes server name (SIGSTOP) (realrun.Cluster).
func (e *ZooKeeperEnsemble) Stop(name string) error {
	i, err := e.index(name)
	if err != nil {
		return err
	}
	return e.Servers[i].Process.Stop()
}

// Cont resumes it (realrun.Cluster).
func (e *ZooKeeperEnsemble) Cont(name string) error {
	i, err := e.index(name)
	if err != nil {
		return err
	}
	return e.Servers[i].Process.Cont()
}

// Restart kills server name and starts it on its data after down,
// returning once it serves again (realrun.Cluster).
func (e *ZooKeeperEnsemble) Restart(ctx context.Context, name string, down time.Duration) error {
	i, err := e.index(name)
	if err != nil {
		return err
	}
	return e.Servers[i].Process.Restart(ctx, down)
}

// Heal heals every cut and ends every delay.
func (e *ZooKeeperEnsemble) Heal() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for l := range e.cut {
		e.link(l[0], l[1], false)
	}
	for i := range e.links {
		for j := range e.links[i] {
			for _, p := range e.links[i][j] {
				p.SetDelay(0)
			}
		}
	}
}

// Settle heals every link, resumes every server, restarts any that is not
// running, and waits until every server serves under one leader
// (realrun.Cluster: before every run).
func (e *ZooKeeperEnsemble) Settle(ctx context.Context) error {
	e.Heal()
	for _, s := range e.Servers {
		s.Process.Cont()
		if !s.Process.Running() {
			if err := s.Process.Restart(ctx, 0); err != nil {
				return err
			}
		}
	}
	return e.AwaitRejoined(ctx)
}

// AwaitRejoined waits until every server serves (a follower answers srvr
// only once it has synced with its leader) and exactly one leads
// (realrun.Rejoiner: the next cluster fault waits for it).
func (e *ZooKeeperEnsemble) AwaitRejoined(ctx context.Context) error {
	for {
		leaders, serving := 0, 0
		for _, s := range e.Servers {
			if m, ok := zkMode(s.Addr); ok {
				serving++
				if strings.HasPrefix(m, "leader") {
					leaders++
				}
			}
		}
		if leaders == 1 && serving == len(e.Servers) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("zookeeper ensemble: %d of %d servers serve, %d lead: %w%s", serving, len(e.Servers), leaders, ctx.Err(), e.notServing())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// notServing describes each server that does not serve: what srvr
// answers, and the end of its log (ZooKeeper's warnings: which peer it
// could not reach, what its election saw), so that an ensemble that did
// not rejoin says why.
func (e *ZooKeeperEnsemble) notServing() string {
	var b strings.Builder
	for _, s := range e.Servers {
		out, err := FourLetterWord(s.Addr, "srvr", time.Second)
		if err != nil {
			out = err.Error()
		} else if _, ok := zkModeOf(out); ok {
			continue
		}
		log := s.Process.Log()
		if len(log) > 2000 {
			log = "…" + log[len(log)-2000:]
		}
		fmt.Fprintf(&b, "\n%s (%s, running %v): srvr: %s\n%s log:\n%s", s.Member, s.Addr, s.Process.Running(), strings.TrimSpace(out), s.Member, log)
	}
	return b.String()
}

// Close kills every server, closes the proxies and removes the
// ensemble's directory.
func (e *ZooKeeperEnsemble) Close() error {
	var wg sync.WaitGroup
	for _, s := range e.Servers {
		wg.Add(1)
		go func() { defer wg.Done(); s.Process.Close() }()
	}
	wg.Wait()
	for i := range e.links {
		for j := range e.links[i] {
			for _, p := range e.links[i][j] {
				p.Close()
			}
		}
	}
	return os.RemoveAll(e.dir)
}
