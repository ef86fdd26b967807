package realrun

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/model"
)

// Cluster is a replicated lease service whose servers the harness started
// (internal/servers: an etcd cluster, a ZooKeeper ensemble), with every
// link between them through its proxies: the cluster faults
// (faults.ClusterKinds) strike between the servers, and who leads comes
// from the servers' own status API.
type Cluster interface {
	// Members names the servers (m1, m2, ...), in Target.Addr's order.
	Members() []string
	// Leader is the member that leads by the servers' own word ("" when
	// none does, or none answers).
	Leader(ctx context.Context) string
	// Isolate cuts (heals) every link between member and the others.
	Isolate(member string, on bool) error
	// Bridge cuts (heals) the members other than member into two halves
	// that cannot reach each other; member reaches both.
	Bridge(member string, on bool) error
	// DelayPeers delays every message on member's links to the others by
	// d (0: no more).
	DelayPeers(member string, d time.Duration) error
	// Stop freezes member's process (SIGSTOP); Cont resumes it.
	Stop(member string) error
	Cont(member string) error
	// Restart kills member (SIGKILL) and starts it again on its data after
	// down, returning once it serves again.
	Restart(ctx context.Context, member string, down time.Duration) error
	// Settle heals every link, resumes and restarts what a fault left
	// stopped or dead, and waits until every member follows one leader: a
	// run starts from a healthy cluster, whatever the last one did.
	Settle(ctx context.Context) error
}

// LeaderRecord is the kind of the history records that say which member
// led when (an observation, not a fault: never counted as one): Target the
// member, Start when the servers' status first said so, End when it
// stopped saying so. A violation's story names the one it overlaps.
const LeaderRecord = "leader"

// leaderPoll is how often a run asks the servers who leads.
const leaderPoll = 250 * time.Millisecond

// watchLeader records who leads, as LeaderRecord records, until the
// workload ends.
func (r *runner) watchLeader(ctx context.Context) {
	c := r.t.Cluster
	cur, idx := "", -1
	var last string      // the last member seen leading
	var lastSeen int64   // when it was last seen leading
	var lastChange int64 // when the leader last changed
	end := func() {
		if idx >= 0 {
			r.ended(idx, r.now())
			idx = -1
		}
	}
	defer end()
	for {
		l := c.Leader(ctx)
		if ctx.Err() != nil {
			return
		}
		if l != cur {
			end()
			if cur != "" || l != "" {
				from := cur
				if from == "" {
					from = "none"
				}
				to := l
				if to == "" {
					to = "none"
				}
				r.logf("%11s %-17s %s -> %s", logTime(r.now()), LeaderRecord, from, to)
			}
			if l != "" && last != "" && l != last {
				r.leaderChanged(last, l, lastSeen, lastChange)
				lastChange = r.now()
			}
			cur = l
			if l != "" {
				idx = r.observe(model.FaultRecord{Kind: LeaderRecord, Target: l, Start: r.now(), HasEnd: true,
					Detail: l + " leads (by the servers' own status)"})
			}
		}
		if idx >= 0 {
			r.ended(idx, r.now()) // an open record lasts until seen otherwise
			last, lastSeen = cur, r.now()
		}
		select {
		case <-ctx.Done():
			return
		case <-r.holdersDone:
			return
		case <-time.After(leaderPoll):
		}
	}
}

// leaderChanged declares what a leader change does to leases when the
// backend says so (Info.LeasesRestart: etcd's new leader refreshes every
// lease to a full TTL plus an election timeout, its lessor's Promote;
// ZooKeeper's starts every session's timeout afresh): a lease nobody could
// renew since the trouble began — the last cluster fault that struck the
// leader after the previous change, else the last time the old leader was
// seen leading — may be freed up to that span, a TTL and RestartGrace past
// its deadline. That is one-sided (leaderSlack): the run's expiry lateness
// grows by it, so a late refusal, renew or write on a leader change is the
// service's promise, while a grant to another before the deadline is
// still judged as two holders.
func (r *runner) leaderChanged(from, to string, lastSeen, lastChange int64) {
	now := r.now()
	r.mu.Lock()
	since := lastSeen
	if r.clusterSince > lastChange && r.clusterSince < since {
		since = r.clusterSince
	}
	span := time.Duration(now-since) * time.Microsecond
	slack := r.t.Info.LeasesRestart
	if slack {
		r.leaderLate = max(r.leaderLate, span)
	}
	r.mu.Unlock()
	if slack {
		r.logf("%11s %-17s %s -> %s: leases may be freed up to %v, a TTL and %v past their deadlines (the new leader restarts them); declared as expiry lateness",
			logTime(now), LeaderRecord, from, to, inMs(span), inMs(r.t.Info.RestartGrace))
	}
}

// observe adds a record that is not a fault (not counted, not logged).
func (r *runner) observe(rec model.FaultRecord) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, rec)
	return len(r.records) - 1
}

// annotate appends s to record i's detail.
func (r *runner) annotate(i int, s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records[i].Detail += s
}

// clusterLoop applies the cluster faults when they fall due, one at a
// time: one that falls due while another lasts waits for it (two at once
// could leave no majority, which no lease service promises to survive).
//
// A fault is over when the cluster is whole again (Rejoiner, up to
// rejoinWithin): a member healed, resumed or restarted is still syncing
// with the leader when its fault's undo returns, and a fault that struck
// then would be a second one at once. (ZooKeeper 3.8.0 loses acknowledged
// transactions when its leader dies while a lagging member syncs:
// ZOOKEEPER-4643/4685, internal/servers' TestZooKeeperEnsembleLostCommits.)
func (r *runner) clusterLoop(ctx context.Context) {
	for _, pf := range r.board.cluster {
		if !sleepUntil(ctx, r, pf.at, r.holdersDone) {
			return
		}
		r.clusterFault(ctx, pf.f)
		if w, ok := r.t.Cluster.(Rejoiner); ok {
			wctx, cancel := context.WithTimeout(ctx, rejoinWithin)
			err := w.AwaitRejoined(wctx)
			cancel()
			if err != nil && ctx.Err() == nil {
				r.logf("%11s %-17s the cluster is not whole %v after the last fault (%v); the next one strikes anyway",
					logTime(r.now()), LeaderRecord, inMs(rejoinWithin), err)
			}
		}
	}
}

// Rejoiner is a Cluster that can tell when every member serves again under
// one leader — synced with it, after a fault that cut, stopped or killed
// one (the ZooKeeper ensemble: srvr answers on every server, one leads;
// the etcd cluster: every member's Status names the same leader).
type Rejoiner interface {
	AwaitRejoined(ctx context.Context) error
}

// rejoinWithin bounds how long the next cluster fault waits for the
// cluster to be whole again.
const rejoinWithin = 10 * time.Second

// resolveMember names the member a cluster fault's target means:
// "leader", the first follower in the members' order, or a member named.
func resolveMember(target, leader string, members []string) string {
	switch target {
	case faults.Leader:
		return leader
	case faults.Follower:
		for _, m := range members {
			if m != leader {
				return m
			}
		}
		return ""
	}
	if slices.Contains(members, target) {
		return target
	}
	return ""
}

func (r *runner) clusterFault(ctx context.Context, f faults.Fault) {
	c := r.t.Cluster
	if c == nil {
		r.partialf(f.Kind, model.FaultRecord{Kind: string(f.Kind), Target: f.Target, Start: r.now(),
			Detail: fmt.Sprintf("not applied: %s is one server, not a cluster the harness started", r.t.Info.Name)})
		return
	}
	// A fault that falls due while no member leads (the last one's
	// election) waits a little for one: "the leader" means someone.
	before := r.awaitLeader(ctx, 5*time.Second)
	member := resolveMember(f.Target, before, c.Members())
	rec := model.FaultRecord{Kind: string(f.Kind), Target: member}
	if member == "" {
		rec.Target = f.Target
		rec.Detail = fmt.Sprintf("not applied: no member is the %s (the servers' status named no leader)", f.Target)
		if f.Target != faults.Leader && f.Target != faults.Follower {
			rec.Detail = fmt.Sprintf("not applied: the cluster has no member %s (members: %v)", f.Target, c.Members())
		}
		r.partialf(f.Kind, rec)
		return
	}
	role := "a follower"
	if member == before {
		role = "the leader"
	}
	d := time.Duration(r.us(f.Duration)) * time.Microsecond
	ds := inMs(d)
	var err error
	var undo func()
	switch f.Kind {
	case faults.MemberIsolate:
		rec.Detail = fmt.Sprintf("%s (%s) cut off from every other member for %v (a minority of one); clients connected to it stay connected", member, role, ds)
		err = c.Isolate(member, true)
		undo = func() { c.Isolate(member, false) }
	case faults.MemberBridge:
		rec.Detail = fmt.Sprintf("the members other than %s (%s) cut from each other for %v; %s reaches both sides (a bridge)", member, role, ds, member)
		err = c.Bridge(member, true)
		undo = func() { c.Bridge(member, false) }
	case faults.PeerDelay:
		amt := time.Duration(r.us(f.Amount)) * time.Microsecond
		rec.Amount = r.us(f.Amount)
		rec.Detail = fmt.Sprintf("%s's (%s) links to the other members delayed %v per message for %v", member, role, inMs(amt), ds)
		err = c.DelayPeers(member, amt)
		undo = func() { c.DelayPeers(member, 0) }
	case faults.MemberPause:
		rec.Detail = fmt.Sprintf("%s (%s) stopped (SIGSTOP) for %v: its connections stay open, nothing answers", member, role, ds)
		err = c.Stop(member)
		undo = func() { c.Cont(member) }
	case faults.MemberCrash:
		rec.Detail = fmt.Sprintf("%s (%s) killed (SIGKILL) and restarted on its data after %v: it comes back with a log that lags the others'", member, role, ds)
	default:
		rec.Detail = fmt.Sprintf("not applied: %s is not a cluster fault", f.Kind)
		r.partialf(f.Kind, rec)
		return
	}
	if err != nil {
		rec.Detail = "not applied: " + err.Error()
		r.partialf(f.Kind, rec)
		return
	}
	rec.Start = r.now()
	if member == before { // the leader hit: from now on it may renew nothing
		r.mu.Lock()
		r.clusterSince = rec.Start
		r.mu.Unlock()
	}
	i := r.count(f.Kind, rec)
	r.cutOff(true) // clients of the member hit may hear nothing until it ends and a leader is elected
	if f.Kind == faults.MemberCrash {
		if err := c.Restart(ctx, member, d); err != nil && ctx.Err() == nil {
			r.annotate(i, fmt.Sprintf("; the restart failed: %v", err))
			r.logf("%11s %-17s %s did not come back: %v", logTime(r.now()), f.Kind, member, err)
		}
	} else {
		sleepFor(ctx, d)
		undo()
	}
	r.ended(i, r.now())
	// The clients of the member hit hear nothing until a leader is elected
	// after the fault too, and the cluster may depose it again as the
	// member hit catches up (clusterRecovery): the watchdog's DeadAfter
	// starts from then.
	after := r.awaitLeader(ctx, 5*time.Second)
	r.excuse(r.now() + clusterRecovery.Microseconds())
	r.cutOff(false)
	r.annotate(i, fmt.Sprintf("; %s led before, %s after", orNone(before), orNone(after)))
	r.logf("%11s %-17s %s ended: %s led before, %s after", logTime(r.now()), f.Kind, member, orNone(before), orNone(after))
}

// awaitLeader asks who leads until some member does, for up to within.
func (r *runner) awaitLeader(ctx context.Context, within time.Duration) string {
	deadline := time.Now().Add(within)
	for {
		if l := r.t.Cluster.Leader(ctx); l != "" || time.Now().After(deadline) || ctx.Err() != nil {
			return l
		}
		sleepFor(ctx, leaderPoll)
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// partitionMember cuts a holder off from one member of a cluster (a
// partition whose Peer is a member): that member's proxy of the holder's
// is blackholed, the others pass, so the client's own endpoint selection
// must find another member.
func (p *proc) partitionMember(now int64, f faults.Fault, rec model.FaultRecord, d int64) {
	r := p.r
	c := r.t.Cluster
	members := []string(nil)
	if c != nil {
		members = c.Members()
	}
	if c == nil || len(p.cl.proxy) != len(members) {
		rec.Detail = fmt.Sprintf("not applied: %s is not a cluster whose members the client connects to one by one", r.t.Info.Name)
		r.partialf(f.Kind, rec)
		return
	}
	// The leader is asked here, on the holder's goroutine: a second at
	// most per member, once per fault.
	member := resolveMember(f.Peer, c.Leader(context.Background()), members)
	i := slices.Index(members, member)
	if i < 0 {
		rec.Detail = fmt.Sprintf("not applied: no member is the %s", f.Peer)
		r.partialf(f.Kind, rec)
		return
	}
	px := p.cl.proxy[i]
	rec.Peer = member
	rec.Detail = fmt.Sprintf("%s%s cut off from %s (%s) for %v, not from the other members", p.process, p.fenceNote(), member, f.Peer, msUS(d))
	px.Blackhole(true)
	r.excuse(now + d)
	p.lifts = append(p.lifts, lift{at: now + d, rec: r.count(f.Kind, rec), fn: func() { px.Blackhole(false) }, cut: true})
}
