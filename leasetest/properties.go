package leasetest

import (
	"fmt"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
)

// The scripted properties. Each walks one key through the states of the
// adapter contract (impl/backend/README.md) with requests a well-behaved
// holder sends and requests it never would — by non-holders, with no
// fence, a stale, the current and a future fence, repeated — and checks
// every answer against the contract row it exercises (named in brackets in
// a failure line). Every exchange is recorded; runProperty has the checker
// judge the history as well.

// Owners: A, B and C hold leases; P only probes (its acquires must be
// refused) and D only sends requests it has no lease for; the reader
// reads.

// ttl is the lease's TTL for messages.
func (e *env) ttl() time.Duration { return e.rec.GrantTTL(e.opts.TTL) }

// wantHeld checks that p, an acquire sent while g's lease (held by holder)
// is live for the checker, was refused; when the checker could not tell,
// a grant is only noted.
func (e *env) wantHeld(g, p reply, holder, id, why string) bool {
	if e.errorWhereKnown(g, p) {
		return e.wantRefused(p, "held", id, why)
	}
	if !e.surelyLive(g, p) {
		if p.granted() {
			e.note("not judged: %s = %s %s after %s's grant or renewal, too late to be sure the lease was live", p.call(), p.got(), since(g, p), holder)
		}
		return !p.granted()
	}
	return e.wantRefused(p, "held", id, why)
}

// Acquire: a free key reads nothing and is granted (with a fence if Info
// declares fences, without one if not); the holder's write is accepted,
// again when repeated, and read back; release succeeds and keeps the data.
func testAcquire(e *env) {
	e.wantRead(e.read(), "", false, "nothing was written on this key yet")
	g := e.mustAcquire("A", "acquire-free", "the key is free")
	f := e.fenceOf(g)
	e.wantOK(e.write("A", f, "a1"), "write-mine-live", "A holds the lease")
	e.wantOK(e.write("A", f, "a1"), "write-mine-live", "A holds the lease (a repeated write is accepted again)")
	e.wantRead(e.read(), "a1", true, "A's accepted write")
	e.wantOK(e.release("A", f), "release-mine-live", "A holds the lease")
	e.wantRead(e.read(), "a1", true, "a release leaves the data as it was")
}

// MutualExclusion: while A holds a live lease, B is refused, and so is A's
// own second acquire (the live holder's acquire is not a renewal); the
// refusals change nothing.
func testMutualExclusion(e *env) {
	g := e.mustAcquire("A", "acquire-free", "the key is free")
	f := e.fenceOf(g)
	e.wantHeld(g, e.acquire("B"), "A", "acquire-other-live", fmt.Sprintf("A holds a live lease, granted just before with TTL %v", e.ttl()))
	e.wantHeld(g, e.acquire("A"), "A", "acquire-held", "A already holds a live lease: a second acquire by the holder grants nothing")
	e.wantHeld(g, e.acquire("B"), "A", "acquire-other-live", "A holds a live lease (a repeated acquire is refused again)")
	e.wantOK(e.write("A", f, "a1"), "write-mine-live", "A still holds its lease: the refused acquires changed nothing")
	e.wantOK(e.release("A", f), "release-mine-live", "A holds the lease")
}

// NoEarlyExpiry: after every kind of grant — on a free key, after another
// owner's lease expired, the same owner's after its own expired, after a
// release — the lease lives its whole TTL: an acquire sent as late as the
// declared uncertainty allows before TTL has passed is refused.
func testNoEarlyExpiry(e *env) { e.grantChain(true) }

// Expiry: after every kind of grant, a lease nobody renews is taken back:
// TTL (plus twice the declared uncertainty) after the grant answered,
// another owner is granted, with a fresh, larger fence.
func testExpiry(e *env) { e.grantChain(false) }

// grantChain walks a key through every kind of grant. early: probe that
// each lease lives its TTL (NoEarlyExpiry); else check that each one ends
// on time and the next grant's fence (Expiry).
func (e *env) grantChain(early bool) {
	probe := func(g reply, holder, what, id string) {
		if early && !e.probeLive(g, holder, "P", what, id) {
			panic(failNow{}) // P holds the lease now: the chain is broken
		}
	}
	// next waits out g's lease (and TTL/4 more, so that "the old expiry +
	// TTL" and "now + TTL" differ) and acquires as owner.
	next := func(g reply, holder, owner, what, id string) reply {
		e.sleepUntil(e.lateAt(g) + int64(e.opts.TTL/4/time.Microsecond))
		p := e.acquire(owner)
		judged := e.surelyExpired(g, p)
		switch {
		case !early && judged:
			e.wantGrant(p, id, fmt.Sprintf("%s's lease (TTL %v), granted %s before, has expired: this is %s", holder, e.ttl(), since(g, p), what))
		case !p.granted() && !judged:
			e.note("not judged: %s = %s %s after %s's grant: not surely expired for the checker", p.call(), p.got(), since(g, p), holder)
		case !p.granted():
			e.note("cannot go on: %s = %s, so the lease did not expire (Expiry says more)", p.call(), p.got())
		}
		if !p.granted() {
			panic(failNow{})
		}
		if !early && e.fences {
			e.wantFenceAfter(g, p, id)
		}
		return p
	}
	g := e.mustAcquire("A", "acquire-free", "the key is free")
	probe(g, "A", "A's grant on a free key", "acquire-free")
	g = next(g, "A", "B", "B's grant after another's lease expired", "acquire-other-expired")
	probe(g, "B", "B's grant after A's lease expired", "acquire-other-expired")
	g2 := next(g, "B", "B", "B's own grant after its lease expired", "acquire-mine-expired")
	probe(g2, "B", "B's new grant after its own lease expired", "acquire-mine-expired")
	e.wantOK(e.release("B", e.fenceOf(g2)), "release-mine-live", "B holds the lease")
	g3 := e.mustAcquire("C", "acquire-released", "B released the key: it is granted at once")
	if !early && e.fences {
		e.wantFenceAfter(g2, g3, "acquire-released")
	}
	probe(g3, "C", "C's grant after B's release", "acquire-released")
	g4 := next(g3, "C", "A", "A's grant after C's lease expired", "acquire-other-expired")
	e.release("A", e.fenceOf(g4))
}

// wantFenceAfter checks that grant p's fence follows grant g's: larger,
// and by exactly one for sequential fences (no other grant came between).
func (e *env) wantFenceAfter(g, p reply, id string) {
	switch {
	case p.Fence <= g.Fence:
		e.fail("%s = %s, want a fence > %d: fences only grow (%s's grant had %d)%s", p.call(), p.got(), g.Fence, g.owner, g.Fence, rule(id))
	case e.info.Fences == backend.SequentialFences && p.Fence != g.Fence+1:
		e.fail("%s = %s, want fence %d: Info.Fences is sequential and the last grant had %d%s", p.call(), p.got(), g.Fence+1, g.Fence, rule(id))
	}
}

// Renew: renewals every TTL/3 keep the lease past its first TTL, a
// repeated renewal is ok, and the renewed lease lives TTL after the last
// renewal — not after the grant — and ends then, not TTL after the old
// expiry.
func testRenew(e *env) {
	g := e.mustAcquire("A", "acquire-free", "the key is free")
	f := e.fenceOf(g)
	last := g
	for last.before-g.before < int64(2*e.opts.TTL/time.Microsecond) {
		e.sleepUntil(last.before + int64(e.opts.TTL/3/time.Microsecond))
		r := e.renew("A", f)
		if !r.granted() && !e.surelyLive(last, r) {
			e.note("not judged: %s = %s %s after the last renewal: too late to be sure the lease was live", r.call(), r.got(), since(last, r))
			panic(failNow{})
		}
		if !e.wantOK(r, "renew-mine-live", fmt.Sprintf("A's lease is live: it was granted or renewed %s before, with TTL %v", since(last, r), e.ttl())) {
			panic(failNow{})
		}
		last = r
	}
	r := e.renew("A", f)
	if e.surelyLive(last, r) && !e.wantOK(r, "renew-mine-live", "A's lease is live (a repeated renewal is ok again)") {
		panic(failNow{})
	}
	if r.granted() {
		last = r
	}
	if !e.probeLive(last, "A", "B", "A's last renewal", "renew-mine-live") {
		panic(failNow{})
	}
	p, judged := e.acquireAfter(last, "B")
	if judged {
		e.wantGrant(p, "renew-mine-live", fmt.Sprintf("A's lease was last renewed %s before, with TTL %v: a renewal extends it from now, not from the old expiry", since(last, p), e.ttl()))
	} else if !p.granted() {
		e.note("not judged: %s = %s %s after A's last renewal", p.call(), p.got(), since(last, p))
	}
}

// RenewAfterExpiry: an expired lease is not renewed back to life, and once
// another owner holds it, the old holder's renewal is refused.
func testRenewAfterExpiry(e *env) {
	g := e.mustAcquire("A", "acquire-free", "the key is free")
	f := e.fenceOf(g)
	e.sleepUntil(e.lateAt(g))
	r := e.renew("A", f)
	e.pause("A", g.after, r.before, "A stopped renewing past its TTL, then renews")
	if e.surelyExpired(g, r) {
		e.wantRefused(r, "expired", "renew-mine-expired", fmt.Sprintf("A's lease (TTL %v) expired: it was granted %s before", e.ttl(), since(g, r)))
	} else if r.granted() {
		e.note("not judged: %s = %s %s after the grant", r.call(), r.got(), since(g, r))
		return
	}
	if r.granted() {
		return // the lease lives on; the rest would only repeat the failure
	}
	p := e.acquire("B")
	if e.surelyExpired(g, p) && !e.wantGrant(p, "acquire-other-expired", "A's lease expired and its renewal was refused") {
		return
	}
	if p.granted() {
		e.wantRefused(e.renew("A", f), "not-holder", "renew-not-holder", "B holds the lease now; A's lease is an earlier term")
	}
}

// Release: a released key is granted at once; a second release, and a
// release from an earlier term, are refused and free nobody; the holder
// whose lease expired (nobody acquired since) may still release it — or
// the backend answers an error when it has forgotten the lease — but is
// never refused.
func testRelease(e *env) {
	ga := e.mustAcquire("A", "acquire-free", "the key is free")
	fa := e.fenceOf(ga)
	if !e.wantOK(e.release("A", fa), "release-mine-live", "A holds the lease") {
		panic(failNow{})
	}
	e.wantRefused(e.release("A", fa), "not-holder", "release-twice", "A released the key already: nobody holds it")
	gb := e.mustAcquire("B", "acquire-released", "A released the key: it is granted at once")
	fb := e.fenceOf(gb)
	e.wantRefused(e.release("A", fa), "not-holder", "release-twice", "B holds the lease: A's second release must not free it")
	e.wantHeld(gb, e.acquire("C"), "B", "acquire-other-live", "B holds a live lease: A's late release must not have freed it")
	e.wantOK(e.write("B", fb, "b1"), "write-mine-live", "B holds the lease")
	e.wantOK(e.release("B", fb), "release-mine-live", "B holds the lease")

	gc := e.mustAcquire("C", "acquire-released", "B released the key: it is granted at once")
	e.sleepUntil(e.lateAt(gc))
	r := e.release("C", e.fenceOf(gc))
	if e.surelyExpired(gc, r) {
		e.wantOKOrUnknown(r, "release-mine-expired", fmt.Sprintf("C's lease expired %v ago and nobody acquired since: the owner check is all reference/lease.py's release does; a backend that forgot the lease answers an error",
			time.Duration(r.before-gc.after-gc.ttl)*time.Microsecond))
	}
	p := e.acquire("B")
	if e.surelyExpired(gc, p) {
		e.wantGrant(p, "acquire-other-expired", "C's lease is over, expired or released")
	}
}

// NotHolder: renews, releases and writes by an owner that does not hold
// the lease — on a free key, while another holds it, after the other's
// lease expired, and by the holder of an earlier term — are refused
// whatever fence they present (none, a stale, the holder's current one, a
// future one), and change nothing: the holder keeps its lease and its data.
func testNotHolder(e *env) {
	// A free key (a write presents a fence where there are fences: 1, not
	// granted yet).
	if e.fenced {
		var f int64
		if e.fences {
			f = 1
		}
		e.wantRefused(e.write("B", f, "b-free"), "not-holder", "write-not-holder", "nobody holds the lease")
	}
	e.wantRefused(e.release("B", 0), "not-holder", "release-not-holder", "nobody holds the lease")
	e.wantRefused(e.renew("B", 0), "not-holder", "renew-not-holder", "nobody holds the lease")

	g0 := e.mustAcquire("A", "acquire-free", "the key is free")
	e.wantOK(e.release("A", e.fenceOf(g0)), "release-mine-live", "A holds the lease")
	ga := e.mustAcquire("A", "acquire-released", "A released the key")
	fa := e.fenceOf(ga)
	e.wantOK(e.write("A", fa, "a1"), "write-mine-live", "A holds the lease")

	// While A's lease is live.
	e.strangers("B", g0, ga, false, fmt.Sprintf("A holds the lease (%s); B never did", e.fenceWords(ga)))
	e.wantHeld(ga, e.acquire("C"), "A", "acquire-other-live", "A holds a live lease: B's requests must not have freed it")
	if e.fenced {
		e.wantRead(e.read(), "a1", true, "A's write; none of B's was accepted")
	}
	ra := e.renew("A", fa)
	last := ga
	if e.surelyLive(ga, ra) {
		e.wantOK(ra, "renew-mine-live", "A still holds its lease: B's requests changed nothing")
	}
	if ra.granted() {
		last = ra
	}

	// A's lease expired, nobody since.
	e.sleepUntil(e.lateAt(last))
	// D, not B again: a stranger's write after its own failed renewal under
	// the same fence would break the client's iron rule.
	e.strangers("D", g0, ga, false, "A's lease expired, D never held it")

	// B holds; A's requests are from an earlier term.
	gb, judged := e.acquireAfter(last, "B")
	if !judged && !gb.granted() {
		e.note("not judged: %s = %s after A's lease: not surely expired", gb.call(), gb.got())
		return
	}
	if !e.wantGrant(gb, "acquire-other-expired", "A's lease expired; B's requests must not have kept it alive") {
		return
	}
	fb := e.fenceOf(gb)
	e.strangers("A", ga, gb, true, fmt.Sprintf("B holds the lease (%s); A's ended", e.fenceWords(gb)))
	e.wantHeld(gb, e.acquire("C"), "B", "acquire-other-live", "B holds a live lease: A's requests must not have freed it")
	e.wantOK(e.write("B", fb, "b1"), "write-mine-live", "B holds the lease")
	e.wantRead(e.read(), "b1", true, "B's write; none of A's old term was accepted after it")
}

// strangers sends writes (if writes are fenced), releases and renews by
// owner, who does not hold the lease, with each fence a stranger may
// present while cur is the holder's grant and old an earlier one: none, the
// stale one, the holder's current one and a future one (only none without
// fences; a write presents one where there are fences). All are refused.
// The writes come first: a write after its own failed renewal would break
// the client's iron rule (stop-on-renew-failure), which the checker judges
// too. earlier: owner held the lease in an earlier term, and a backend
// that forgot that lease may answer its release with an error.
func (e *env) strangers(owner string, old, cur reply, earlier bool, why string) {
	fences := []int64{0}
	if e.fences {
		fences = []int64{0, old.Fence, cur.Fence, cur.Fence + 1}
	}
	if e.fenced {
		for i, f := range fences {
			if f == 0 && e.fences {
				continue
			}
			e.wantRefused(e.write(owner, f, fmt.Sprintf("%s-stray%d", owner, i)), "not-holder", "write-not-holder", why)
		}
	} else {
		e.note("not checked: writes by %s, who does not hold the lease (%s)", owner, whyUnfencedWrites)
	}
	for _, f := range fences {
		r := e.release(owner, f)
		if earlier {
			e.wantRefusedOrUnknown(r, "not-holder", "release-earlier-term", why)
		} else {
			e.wantRefused(r, "not-holder", "release-not-holder", why)
		}
	}
	for _, f := range fences {
		e.wantRefused(e.renew(owner, f), "not-holder", "renew-not-holder", why)
	}
}

func (e *env) fenceWords(g reply) string {
	if !e.fences {
		return "no fences"
	}
	return fmt.Sprintf("fence %d", g.Fence)
}

// FenceIncreases: every grant's fence is larger than the previous one's
// (by exactly one for sequential fences).
func testFenceIncreases(e *env) {
	var last reply
	for i := 0; i < 6; i++ {
		owner := []string{"A", "B"}[i%2]
		id := "acquire-released"
		if i == 0 {
			id = "acquire-free"
		}
		g := e.mustAcquire(owner, id, "the key is free")
		if i > 0 {
			e.wantFenceAfter(last, g, id)
		}
		last = g
		if !e.wantOK(e.release(owner, g.Fence), "release-mine-live", owner+" holds the lease") {
			panic(failNow{})
		}
	}
}

// StaleFence: the holder's renew, release and write under a stale fence
// (its own earlier grant's) or a future one (never granted) are refused
// and change nothing; under its current fence they succeed.
func testStaleFence(e *env) {
	g1 := e.mustAcquire("A", "acquire-free", "the key is free")
	if !e.wantOK(e.release("A", g1.Fence), "release-mine-live", "A holds the lease") {
		panic(failNow{})
	}
	g2 := e.mustAcquire("A", "acquire-released", "A released the key")
	f1, f2 := g1.Fence, g2.Fence
	bad := []struct {
		f    int64
		what string
	}{{f1, "stale: A's earlier grant"}, {f2 + 1, "a future one, never granted"}}
	why := func(f int64, what string) string { return fmt.Sprintf("A holds fence %d; fence %d is %s", f2, f, what) }
	// Writes first: a write after its own failed renewal breaks the
	// client's iron rule, which the checker judges too.
	for _, b := range bad {
		if e.fenced {
			e.wantRefused(e.write("A", b.f, fmt.Sprintf("fence-%d", b.f)), "stale-fence", "write-wrong-fence", why(b.f, b.what))
		}
	}
	if !e.fenced {
		e.note("not checked: writes under a stale or a future fence (%s)", whyUnfencedWrites)
	}
	for _, b := range bad {
		e.wantRefused(e.release("A", b.f), "stale-fence", "release-wrong-fence", why(b.f, b.what))
	}
	for _, b := range bad {
		e.wantRefused(e.renew("A", b.f), "stale-fence", "renew-wrong-fence", why(b.f, b.what))
	}
	e.wantHeld(g2, e.acquire("B"), "A", "acquire-other-live", "A holds a live lease: the releases under a wrong fence must not have freed it")
	e.wantOK(e.write("A", f2, "fresh"), "write-mine-live", fmt.Sprintf("A holds fence %d", f2))
	if e.fenced {
		e.wantRead(e.read(), "fresh", true, "A's write under its current fence; none under a wrong one was accepted")
	}
	r := e.renew("A", f2)
	if e.surelyLive(g2, r) {
		e.wantOK(r, "renew-mine-live", fmt.Sprintf("A holds fence %d, live", f2))
	}
	e.wantOK(e.release("A", f2), "release-mine-live", fmt.Sprintf("A holds fence %d", f2))
}

// WriteAfterExpiry: the holder's write after its lease expired is refused,
// even when nobody took the lease since: the service checks the deadline.
func testWriteAfterExpiry(e *env) {
	g := e.mustAcquire("A", "acquire-free", "the key is free")
	f := e.fenceOf(g)
	e.wantOK(e.write("A", f, "a1"), "write-mine-live", "A holds the lease")
	e.sleepUntil(e.lateAt(g))
	w := e.write("A", f, "late")
	e.pause("A", g.after, w.before, "A paused past its TTL between its check and its write")
	if !e.surelyExpired(g, w) {
		if w.granted() {
			e.note("not judged: %s = %s %s after the grant", w.call(), w.got(), since(g, w))
		}
		return
	}
	if e.wantRefused(w, "expired", "write-mine-expired", fmt.Sprintf("A's lease (TTL %v) expired: it was granted %s before", e.ttl(), since(g, w))) {
		e.wantRead(e.read(), "a1", true, "A's late write was refused")
	}
}

// The missing protection of a backend whose writes are not fenced, named
// once (by Zombie) instead of by every property that presupposes it.
const unfencedFinding = "writes are not fenced: a holder paused past its TTL wrote after the lease moved on"

// Zombie: the article's GC pause. A pauses past its TTL; B is granted; A's
// write under its old fence, arriving before B writes anything, is refused;
// B's is accepted and read back. For a backend whose writes are not fenced
// (Info.Writes is UncheckedWrites), A's write is accepted, and that is the finding
// this property reports: the one cost of the missing protection.
func testZombie(e *env) {
	ga := e.mustAcquire("A", "acquire-free", "the key is free")
	fa := e.fenceOf(ga)
	if !e.wantOK(e.write("A", fa, "a1"), "write-mine-live", "A holds the lease") {
		panic(failNow{})
	}
	gb, judged := e.acquireAfter(ga, "B")
	if !judged && !gb.granted() {
		e.note("not judged: %s = %s after A's lease: not surely expired", gb.call(), gb.got())
		return
	}
	if !e.wantGrant(gb, "acquire-other-expired", fmt.Sprintf("A's lease (TTL %v) expired %v ago", e.ttl(), time.Duration(gb.before-ga.after-ga.ttl)*time.Microsecond)) {
		panic(failNow{})
	}
	fb := e.fenceOf(gb)
	z := e.write("A", fa, "a2-zombie")
	paused := time.Duration(z.before-ga.after) * time.Microsecond
	e.pause("A", ga.after, z.before, fmt.Sprintf("A (%s) paused %v, past its TTL of %v, between its check and its write", e.fenceWords(ga), paused.Round(time.Millisecond), e.ttl()))
	switch {
	case e.fenced:
		e.wantRefused(z, "not-holder", "write-not-holder", fmt.Sprintf("B holds the lease (%s) since A's expired; A was paused past its TTL", e.fenceWords(gb)))
	case z.granted():
		e.res.Finding = unfencedFinding
		e.res.Evidence = fmt.Sprintf("%s = ok after A paused %v (TTL %v), while B holds the lease: nothing checked the write against the lease%s",
			z.call(), paused.Round(time.Millisecond), e.ttl(), rule("write-not-holder"))
	default:
		e.note("%s = %s, though Info.Writes is UncheckedWrites: if the service checks writes against the lease, declare backend.CheckedWrites and the suite checks them all", z.call(), z.got())
	}
	e.wantOK(e.write("B", fb, "b1"), "write-mine-live", "B holds the lease")
	e.wantRead(e.read(), "b1", true, "B's write, the last accepted")
}
