package k8ssweep

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apimachinery/pkg/watch"
)

// Coordinated leader election (KEP-4355), as the Kubernetes API server runs
// it for every Lease some LeaseCandidate names: the candidates register
// (coordination.k8s.io/v1beta1 LeaseCandidates: client-go's
// leaderelection.NewCandidate) and never take the Lease themselves; the
// API server's controller picks the best of them and writes the Lease
// naming it, and client-go's coordinated elector (LeaderElectionConfig.
// Coordinated) renews a Lease it finds naming itself. Written from the
// published algorithm (the KEP, the LeaseCandidate API's documentation):
//
//   - the strategy is the one the candidate of the latest binary version
//     states; OldestEmulationVersion — the only one the API defines —
//     prefers the lowest emulation version, then the lowest binary
//     version, then the oldest candidate (creation), then the name;
//   - an election (no Lease, no holder, or a Lease that ran out: its
//     renewTime + leaseDurationSeconds passed) first pings every candidate
//     that has not renewed its LeaseCandidate lately (pingTime set; the
//     candidate answers by renewing), waits for the answers, and elects
//     the best of those that answered or were fresh: a candidate that
//     crashed or is paused does not answer and is passed over;
//   - while the Lease is held and not run out, a better candidate than the
//     holder preempts it: the controller marks the Lease's preferredHolder
//     (the "end of term"), client-go's elector stops renewing a Lease so
//     marked, and once it has run out the controller elects — the holder
//     is never replaced while its Lease is live.
//
// The controller runs as the server is asked, before each request is
// served (the candidates poll the Lease every RetryPeriod, so it acts
// within one of its polls of the state changing), which keeps it one of
// the harness's steps: deterministic, in virtual time.
type election struct {
	// pinged is when the election in progress pinged the stale candidates
	// (0: no ping round under way).
	pinged time.Time
	// renew is the Lease's renewTime as last written, and renewedAt when
	// the server saw it change: the Lease runs out leaseDurationSeconds
	// after that observation (the API's word: "measured against the time
	// of last observed renewTime"), never after the time the holder
	// stamped — a renewal stamped before a pause and applied after it
	// renews from when it was applied.
	renew     string
	renewedAt time.Time
}

var leaseCandidates = &resource{gv: coordinationv1beta1.SchemeGroupVersion, name: "leasecandidates", kind: "LeaseCandidate",
	newObj: func() runtime.Object { return &coordinationv1beta1.LeaseCandidate{} },
	newList: func(items []runtime.Object) runtime.Object {
		l := &coordinationv1beta1.LeaseCandidateList{Items: []coordinationv1beta1.LeaseCandidate{}}
		for _, o := range items {
			l.Items = append(l.Items, *o.(*coordinationv1beta1.LeaseCandidate))
		}
		return l
	}}

// synctestEpoch is where a synctest bubble's clock starts: the server's
// wall time at virtual millisecond now is synctestEpoch + now, the time
// the candidates' clocks read then (unskewed).
// leasesResource is the Lease resource (coordination.k8s.io/v1).
var leasesResource = resources[0]

var synctestEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

func wall(now int64) time.Time { return synctestEpoch.Add(time.Duration(now) * time.Millisecond) }

// pingWait is how long an election waits for the pinged candidates to
// answer, and freshFor how recently a candidate must have renewed its
// LeaseCandidate to count without a ping: both scale with the Lease's
// duration d.
func pingWait(d time.Duration) time.Duration { return max(time.Second, d/5) }
func freshFor(d time.Duration) time.Duration { return d }

// coordinate runs the coordinating controller at now over every Lease a
// LeaseCandidate names; ttl is the run's lease duration (ms), the one a
// Lease it creates is given. It returns what it did, for the trace.
func (s *Server) coordinate(now, ttl int64) string {
	byLease := map[objKey][]*coordinationv1beta1.LeaseCandidate{}
	var leases []objKey
	for k, o := range s.objects {
		if k.res != leaseCandidates {
			continue
		}
		lc := o.(*coordinationv1beta1.LeaseCandidate)
		lk := objKey{leasesResource, k.namespace, lc.Spec.LeaseName}
		if _, ok := byLease[lk]; !ok {
			leases = append(leases, lk)
		}
		byLease[lk] = append(byLease[lk], lc)
	}
	if len(leases) == 0 {
		return ""
	}
	slices.SortFunc(leases, func(a, b objKey) int {
		return strings.Compare(a.namespace+"/"+a.name, b.namespace+"/"+b.name)
	})
	var did []string
	for _, lk := range leases {
		cands := byLease[lk]
		slices.SortFunc(cands, func(a, b *coordinationv1beta1.LeaseCandidate) int { return strings.Compare(a.Name, b.Name) })
		if d := s.elect(now, ttl, lk, cands); d != "" {
			did = append(did, d)
		}
	}
	return strings.Join(did, "; ")
}

// elect takes one step of the election of the Lease at lk among cands.
func (s *Server) elect(now, ttl int64, lk objKey, cands []*coordinationv1beta1.LeaseCandidate) string {
	name := lk.namespace + "/" + lk.name
	e := s.elections[name]
	if e == nil {
		e = &election{}
		s.elections[name] = e
	}
	strategy, ok := pickStrategy(cands)
	if !ok || strategy != coordinationv1.OldestEmulationVersion {
		return "" // conflicting or unknown strategies: the API server leaves the Lease alone
	}
	t := wall(now)
	d := time.Duration(max(ttl/1000, 1)) * time.Second
	var lease *coordinationv1.Lease
	if o, ok := s.objects[lk]; ok {
		lease = o.(*coordinationv1.Lease)
		if lease.Spec.LeaseDurationSeconds != nil && *lease.Spec.LeaseDurationSeconds > 0 {
			d = time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second
		}
	}
	holder := ""
	if lease != nil {
		holder = deref(lease.Spec.HolderIdentity)
	}
	if holder != "" && !e.expired(lease, t, s.StampExpiry) {
		// Held and live: preempt the holder if a better candidate is up.
		if deref(lease.Spec.PreferredHolder) != "" {
			return "" // its term is ending: wait for it to run out
		}
		var hc *coordinationv1beta1.LeaseCandidate
		for _, c := range cands {
			if c.Name == holder {
				hc = c
			}
		}
		better := false
		for _, c := range cands {
			if c.Name != holder && valid(c) && (hc == nil || !valid(hc) || compare(c, hc) < 0) {
				better = true
			}
		}
		if !better {
			e.pinged = time.Time{}
			return ""
		}
		best, ping := s.eligible(now, e, t, d, cands)
		if ping != "" || best == nil || best.Name == holder {
			return ping
		}
		l := lease.DeepCopy()
		l.Spec.PreferredHolder = &best.Name
		s.storeByController(now, lk, l)
		e.pinged = time.Time{}
		return fmt.Sprintf("coordinated election of Lease %s: %s is a better candidate than the holder %s; preferredHolder set (the end of %s's term)", name, best.Name, holder, holder)
	}
	best, ping := s.eligible(now, e, t, d, cands)
	if ping != "" || best == nil {
		return ping
	}
	e.pinged = time.Time{}
	mt := metav1.NewMicroTime(t)
	secs := int32(d / time.Second)
	st := strategy
	if lease == nil {
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: lk.name, Namespace: lk.namespace},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &best.Name, LeaseDurationSeconds: &secs, AcquireTime: &mt, RenewTime: &mt,
				LeaseTransitions: new(int32), Strategy: &st}}
		l.SetUID(types.UID(fmt.Sprintf("uid-%d", s.rv+1)))
		l.SetCreationTimestamp(metav1.Unix(now/1000, (now%1000)*1e6))
		s.storeByController(now, lk, l)
		return fmt.Sprintf("coordinated election of Lease %s: created it for %s, the best candidate", name, best.Name)
	}
	l := lease.DeepCopy()
	tr := int32(0)
	if l.Spec.LeaseTransitions != nil {
		tr = *l.Spec.LeaseTransitions
	}
	if holder != best.Name {
		tr++
	}
	l.Spec.HolderIdentity, l.Spec.AcquireTime, l.Spec.RenewTime, l.Spec.LeaseTransitions = &best.Name, &mt, &mt, &tr
	l.Spec.LeaseDurationSeconds, l.Spec.Strategy, l.Spec.PreferredHolder = &secs, &st, nil
	s.storeByController(now, lk, l)
	why := "it had run out"
	if holder == "" {
		why = "it had no holder"
	}
	return fmt.Sprintf("coordinated election of Lease %s: %s; elected %s (was %q)", name, why, best.Name, holder)
}

// eligible returns the best candidate that is alive: fresh, or answering
// the ping round; while candidates are stale it starts a ping round (what
// it did is ping) or waits for its answers (best nil).
func (s *Server) eligible(now int64, e *election, t time.Time, d time.Duration, cands []*coordinationv1beta1.LeaseCandidate) (best *coordinationv1beta1.LeaseCandidate, ping string) {
	fresh := func(c *coordinationv1beta1.LeaseCandidate) bool {
		return c.Spec.RenewTime != nil && !c.Spec.RenewTime.Time.Before(t.Add(-freshFor(d)))
	}
	if e.pinged.IsZero() || e.pinged.Before(t.Add(-freshFor(d))) {
		var stale []string
		for _, c := range cands {
			if !fresh(c) {
				stale = append(stale, c.Name)
			}
		}
		if len(stale) > 0 {
			e.pinged = t
			for _, c := range cands {
				if fresh(c) {
					continue
				}
				lc := c.DeepCopy()
				pt := metav1.NewMicroTime(t)
				lc.Spec.PingTime = &pt
				s.storeByController(now, objKey{leaseCandidates, c.Namespace, c.Name}, lc)
			}
			return nil, fmt.Sprintf("coordinated election of Lease %s/%s: pinged %s", cands[0].Namespace, cands[0].Spec.LeaseName, strings.Join(stale, ", "))
		}
	}
	if !e.pinged.IsZero() && t.Before(e.pinged.Add(pingWait(d))) {
		return nil, "" // waiting for the pinged to answer
	}
	for _, c := range cands {
		// Alive: fresh when the ping round began (it was not pinged, so
		// need not answer), or renewed since.
		alive := fresh(c)
		if !e.pinged.IsZero() {
			alive = c.Spec.RenewTime != nil && !c.Spec.RenewTime.Time.Before(e.pinged.Add(-freshFor(d)))
		}
		if alive && valid(c) && (best == nil || compare(c, best) < 0) {
			best = c
		}
	}
	return best, ""
}

// storeByController keeps o at k as the API server's own controller writes
// it: a new resourceVersion, the watches told. A Lease it writes names a
// holder no candidate's request made: the judged Lease's holder is then
// the one it names, whose first renewal of it is its acquire.
func (s *Server) storeByController(now int64, k objKey, o runtime.Object) {
	s.rv++
	o.(metav1.Object).SetResourceVersion(strconv.FormatInt(s.rv, 10))
	o.GetObjectKind().SetGroupVersionKind(k.res.gv.WithKind(k.res.kind))
	typ := watch.Modified
	if _, ok := s.objects[k]; !ok {
		typ = watch.Added
	}
	s.objects[k] = o
	s.notify(change{rv: s.rv, typ: typ, key: k, obj: o})
	l, ok := o.(*coordinationv1.Lease)
	if !ok {
		return
	}
	s.observe(now, k, l)
	if ls := s.lease(k, typ == watch.Added); ls != nil {
		h := deref(l.Spec.HolderIdentity)
		ls.versions[l.ResourceVersion] = h
		if h != ls.holder {
			ls.holder, ls.expiry = h, 0
		}
	}
}

// expired reports whether l ran out by t: leaseDurationSeconds passed since
// the server observed its renewTime change (a Lease never renewed has) —
// or, stamped, since the renewTime the holder wrote.
func (e *election) expired(l *coordinationv1.Lease, t time.Time, stamped bool) bool {
	if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil || e.renewedAt.IsZero() {
		return true
	}
	from := e.renewedAt
	if stamped {
		from = l.Spec.RenewTime.Time
	}
	return !t.Before(from.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second))
}

// observe notes a write of the Lease at k applied at now: when its
// renewTime changed, the election's Lease was renewed then.
func (s *Server) observe(now int64, k objKey, l *coordinationv1.Lease) {
	name := k.namespace + "/" + k.name
	e := s.elections[name]
	if e == nil {
		e = &election{}
		s.elections[name] = e
	}
	rt := ""
	if l.Spec.RenewTime != nil {
		rt = l.Spec.RenewTime.UTC().Format(time.RFC3339Nano)
	}
	if rt != e.renew {
		e.renew, e.renewedAt = rt, wall(now)
	}
}

// pickStrategy is the strategy the candidate of the latest binary version
// states; ok is false when two of that version state different ones.
func pickStrategy(cands []*coordinationv1beta1.LeaseCandidate) (coordinationv1.CoordinatedLeaseStrategy, bool) {
	var top *version.Version
	var st coordinationv1.CoordinatedLeaseStrategy
	ok := false
	for _, c := range cands {
		v, err := version.ParseSemantic(c.Spec.BinaryVersion)
		if err != nil {
			continue
		}
		switch {
		case top == nil || v.GreaterThan(top):
			top, st, ok = v, c.Spec.Strategy, true
		case v.EqualTo(top) && c.Spec.Strategy != st:
			ok = false
		}
	}
	return st, ok
}

// valid reports whether c can be elected under OldestEmulationVersion: both
// versions parse, the emulation version no later than the binary's.
func valid(c *coordinationv1beta1.LeaseCandidate) bool {
	b, err1 := version.ParseSemantic(c.Spec.BinaryVersion)
	e, err2 := version.ParseSemantic(c.Spec.EmulationVersion)
	return err1 == nil && err2 == nil && !e.GreaterThan(b)
}

// compare orders two valid candidates, the better first: the lower
// emulation version, then the lower binary version, then the older, then
// the name.
func compare(a, b *coordinationv1beta1.LeaseCandidate) int {
	if c := compareVersions(a.Spec.EmulationVersion, b.Spec.EmulationVersion); c != 0 {
		return c
	}
	if c := compareVersions(a.Spec.BinaryVersion, b.Spec.BinaryVersion); c != 0 {
		return c
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		if a.CreationTimestamp.Before(&b.CreationTimestamp) {
			return -1
		}
		return 1
	}
	return strings.Compare(a.Name, b.Name)
}

// compareVersions orders two semantic versions (valid has parsed both).
func compareVersions(a, b string) int {
	x, _ := version.ParseSemantic(a)
	y, _ := version.ParseSemantic(b)
	switch {
	case x.LessThan(y):
		return -1
	case y.LessThan(x):
		return 1
	}
	return 0
}

func init() { resources = append(resources, leaseCandidates) }
