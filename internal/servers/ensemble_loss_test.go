package servers_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/leasecheck/leasecheck/internal/servers"
)

// zkEpochAnomaly is what ZooKeeper 3.8.0's leader logs when a follower,
// mid-sync, acknowledges NEWLEADER with a proposal's zxid (ZOOKEEPER-4685):
// the follower has already written the new epoch to its currentEpoch
// file, without the transactions of the sync (ZOOKEEPER-4643).
const zkEpochAnomaly = "is from a different epoch"

// TestZooKeeperEnsembleLostCommits replays, without leasecheck's recorder,
// proxies between clients or lock recipe, the schedule of
// zookeeper-ensemble seed 7 (testdata/scenarios/cluster/found/): a
// follower stopped (SIGSTOP) for 2.76 s while writers create sequential
// nodes, resumed, and the leader killed 5 ms later and restarted after
// 1.2 s (after a bridge around the leader, as there). The resumed follower syncs with a new leader; on ZooKeeper 3.8.0
// it sometimes writes the new epoch before the sync's transactions, the
// new leader's attempt fails, and at the next election the follower's
// higher epoch beats the longer history of the others: it leads, and the
// others are truncated (TRUNC, or SNAP) to its history, so creates that
// were acknowledged are gone, or the parent's sequence counter goes back
// and hands numbers out again (seen both ways here).
//
// Two judges: the clients (every acknowledged create still there at the
// end, and a create called after another returned gets a larger
// sequence number) and ZooKeeper's own log. The test fails when the clients
// see a loss in a round whose logs show no epoch anomaly — then the loss
// is not ZooKeeper's known bug, and the harness (the proxies between the
// servers, the signals) is the suspect. Losses with the anomaly are
// ZooKeeper's and are reported in the log. LEASECHECK_SOAK=1 runs it
// (make soak): about 14 s a round.
func TestZooKeeperEnsembleLostCommits(t *testing.T) {
	if os.Getenv("LEASECHECK_SOAK") == "" {
		t.Skip("a soak test (about 2 minutes): LEASECHECK_SOAK=1, or make soak")
	}
	if _, err := servers.ZooKeeperClasspath(); err != nil {
		t.Fatal(err)
	}
	rounds := 12
	if n, err := strconv.Atoi(os.Getenv("LEASECHECK_SOAK_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rounds)*time.Minute)
	defer cancel()
	e, err := servers.StartZooKeeperEnsemble(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	conn := func() *zk.Conn {
		c, _, err := zk.Connect(e.Endpoints(), 3*time.Second, zk.WithLogInfo(false), zk.WithLogger(zkQuiet{}))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c0 := conn()
	defer c0.Close()
	if _, err := c0.Create("/l", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	type create struct {
		call, ret time.Time
		path      string
		seq       int64
		round     int
	}
	var (
		mu      sync.Mutex
		creates []create
		round   int
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		w := w
		c := conn()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			// Every create's name is its own: a sequence number handed out
			// again must not make a lost node look present.
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				call := time.Now()
				p, err := c.Create(fmt.Sprintf("/l/w%d-%d-", w, i), nil, zk.FlagSequence, zk.WorldACL(zk.PermAll))
				if err != nil {
					time.Sleep(50 * time.Millisecond)
					continue
				}
				seq, _ := strconv.ParseInt(p[len(p)-10:], 10, 64)
				mu.Lock()
				creates = append(creates, create{call, time.Now(), p, seq, round})
				mu.Unlock()
				time.Sleep(30 * time.Millisecond)
			}
		}()
	}
	anomaly := map[int]bool{}
	logFrom := make([]int, len(e.Servers))
	for r := 0; r < rounds; r++ {
		if err := e.Settle(ctx); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		round = r
		mu.Unlock()
		for i, s := range e.Servers {
			logFrom[i] = len(s.Log())
		}
		time.Sleep(500 * time.Millisecond)
		leader := e.Leader(ctx)
		var follower string
		for _, m := range e.Members() {
			if m != leader {
				follower = m
				break
			}
		}
		// As in seed 7: the other two cut from each other around the
		// leader (a bridge) first, so their election links are new.
		e.Bridge(leader, true)
		time.Sleep(3800 * time.Millisecond)
		e.Bridge(leader, false)
		time.Sleep(10 * time.Millisecond)
		if err := e.Stop(follower); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2760 * time.Millisecond)
		e.Cont(follower)
		time.Sleep(5 * time.Millisecond)
		if err := e.Restart(ctx, leader, 1200*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		for i, s := range e.Servers {
			if l := s.Log(); strings.Contains(l[min(logFrom[i], len(l)):], zkEpochAnomaly) {
				anomaly[r] = true
			}
		}
		t.Logf("round %d: %s led, %s stopped; %s leads after; epoch anomaly in the logs: %v", r, leader, follower, e.Leader(ctx), anomaly[r])
	}
	close(stop)
	wg.Wait()
	if err := e.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	c0.Sync("/l")
	kids, _, err := c0.Children("/l")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, k := range kids {
		have["/l/"+k] = true
	}
	lost := map[int]int{}
	backwards := map[int]int{}
	for _, c := range creates {
		if !have[c.path] {
			lost[c.round]++
		}
	}
	// Sorted by return, the largest sequence returned so far must stay
	// below every later call's (creates are few: quadratic is fine).
	for _, a := range creates {
		for _, b := range creates {
			if a.ret.Before(b.call) && a.seq >= b.seq {
				backwards[b.round]++
				break
			}
		}
	}
	zkLosses := 0
	for r := 0; r < rounds; r++ {
		if lost[r] == 0 && backwards[r] == 0 {
			continue
		}
		if !anomaly[r] {
			t.Errorf("round %d: %d acknowledged creates lost, %d sequence numbers handed out again, and ZooKeeper's logs show no epoch anomaly: not ZooKeeper's known bug", r, lost[r], backwards[r])
			continue
		}
		zkLosses++
		t.Logf("round %d: ZooKeeper lost %d acknowledged creates and handed out %d sequence numbers again (its leader logged a NEWLEADER ACK %q: ZOOKEEPER-4685/4643)", r, lost[r], backwards[r], zkEpochAnomaly)
	}
	t.Logf("%d creates acknowledged over %d rounds; ZooKeeper %s lost acknowledged ones in %d rounds", len(creates), rounds, "3.8.0", zkLosses)
}
