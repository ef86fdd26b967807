package k8slease

import (
	"fmt"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/internal/k8ssweep"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/vclient"
)

// clientGoPatched says client-go's tools/leaderelection in this binary is
// built with leasecheck's overlay (internal/overlaygen: tryRelease checks
// the record it read); set by this package's tests built with it
// (patched_test.go, the clientgopatched tag). The release variants' names
// say which client-go they run, so each is refused on the other build.
var clientGoPatched bool

func releases(impl string) bool { return k8ssweep.Releases(impl) }

func isFenced(impl string) bool { return k8ssweep.IsFenced(impl) }

// fencedToken is the token a fenced implementation's writes carry; ok is
// false for an unfenced one.
func fencedToken(impl string) (k TokenKind, ok bool) {
	switch impl {
	case k8ssweep.Fenced, k8ssweep.ReleaseFenced, k8ssweep.ReleaseFencedPatched:
		return TokenAcquired, true
	case k8ssweep.FencedHeld:
		return TokenHeld, true
	case k8ssweep.FencedTransitions:
		return TokenTransitions, true
	}
	return 0, false
}

// target returns the campaign target an implementation name of
// leasecheck's own sweeps of this package's elector stands for,
// its runs bubbles of t; an unknown name is an error naming the known ones.
// Every one declares client-go's belief advisory (vclient.Options): its
// documentation promises no end of IsLeader before the Lease can move, so
// where the writes are fenced an overlap the fence kept harmless is a
// warning; unfenced, it is a violation.
func target(t *testing.T, impl string) (*vclient.Target, error) {
	tg := &vclient.Target{T: t, Name: impl}
	switch impl {
	case k8ssweep.Unfenced, k8ssweep.AcceptStale:
		stale := impl == k8ssweep.AcceptStale
		tg.Client = &elector{}
		tg.Options = vclient.Options{Fences: model.NoFences, AdvisoryBelief: true,
			Server: func() vclient.Server { s := k8ssweep.NewServer(); s.AcceptStale = stale; return s }}
	case k8ssweep.Naive:
		tg.Client = &elector{WriteWithTermContext: true}
		tg.Options = vclient.Options{Fences: model.NoFences, AdvisoryBelief: true, Server: func() vclient.Server { return k8ssweep.NewServer() }}
	case k8ssweep.Fenced, k8ssweep.FencedHeld, k8ssweep.FencedTransitions, k8ssweep.Release, k8ssweep.ReleaseFenced, k8ssweep.ReleasePatched, k8ssweep.ReleaseFencedPatched:
		e := &elector{Fenced: isFenced(impl), ReleaseOnCancel: releases(impl)}
		switch patched := impl == k8ssweep.ReleasePatched || impl == k8ssweep.ReleaseFencedPatched; {
		case patched && !clientGoPatched:
			return nil, fmt.Errorf("implementation %q: runs only in this package's tests built with client-go's release patched (make test-clientgo-patched)", impl)
		case !patched && releases(impl) && clientGoPatched:
			return nil, fmt.Errorf("implementation %q: this test binary's client-go is built with the patched release; the unpatched variants run without the overlay", impl)
		}
		tg.Client = e
		if e.Fenced {
			k, _ := fencedToken(impl)
			e.Token = k
			tokens := model.OrderedTokens // the holder's own, not the grant's number
			if k == TokenAcquired {
				tokens = model.GrantTokens
			}
			tg.Options = vclient.Options{Fenced: true, Fences: model.Increasing, Tokens: tokens, AdvisoryBelief: true,
				Server: func() vclient.Server { s := k8ssweep.NewServer(); s.Fenced = true; return s }}
		} else {
			tg.Options = vclient.Options{Fences: model.NoFences, AdvisoryBelief: true,
				Server: func() vclient.Server { return k8ssweep.NewServer() }}
		}
	default:
		return nil, fmt.Errorf("implementation %q: want %s", impl, strings.Join([]string{k8ssweep.Unfenced, k8ssweep.Naive, k8ssweep.Fenced, k8ssweep.FencedHeld, k8ssweep.FencedTransitions, k8ssweep.AcceptStale, k8ssweep.Release, k8ssweep.ReleaseFenced, k8ssweep.ReleasePatched, k8ssweep.ReleaseFencedPatched}, ", "))
	}
	return tg, nil
}

// Timing is one setting of the three parameters, in milliseconds.
type Timing struct {
	Name                                      string
	LeaseDuration, RenewDeadline, RetryPeriod int64
}

// Timings are the settings a sweep draws from: client-go's defaults (as
// kube-controller-manager and kube-scheduler ship them), OpenShift's
// (137 s / 107 s / 26 s, chosen to ride out an API server's restart), a
// relaxed one, and tight ones that client-go's validation accepts; the
// last is not Safe.
var Timings = []Timing{
	{"default", 15000, 10000, 2000},
	{"openshift", 137000, 107000, 26000},
	{"relaxed", 60000, 15000, 5000},
	{"tight", 4000, 2500, 1000},
	{"tight-edge", 5000, 4000, 1000},
	{"tight-2s", 2000, 1500, 1000},
}

// Safe reports whether the timing keeps a leader inside its lease under
// any API latency within RenewDeadline: the leader's renewals are applied
// a round trip + RetryPeriod apart (the Latency profile slows both legs
// alike), and the others may take over LeaseDuration after the last one;
// so RetryPeriod + RenewDeadline must not exceed LeaseDuration. client-go
// checks only LeaseDuration > RenewDeadline > 1.2·RetryPeriod: tight-2s
// (2 s / 1.5 s / 1 s) passes its check and is not safe.
func (t Timing) Safe() bool { return t.safeAt(0) }

// safeAt is Safe where a candidate's clock runs ppm parts per million
// fast: a follower's LeaseDuration then passes in LeaseDuration/(1+ppm/10⁶)
// of true time, while a holder that cannot renew believes for up to
// RetryPeriod + RenewDeadline of true time (client-go's renew deadline is
// a context timeout, not its clock). client-go's doc comment puts the
// tolerated ratio of clock rates at about LeaseDuration/RenewDeadline;
// this is that bound with the holder's RetryPeriod counted.
func (t Timing) safeAt(ppm int64) bool {
	return (t.RetryPeriod+t.RenewDeadline)*(1_000_000+ppm) <= t.LeaseDuration*1_000_000
}

// Profile is a sweep's fault class, by the name -profile takes:
//
//   - "none": no fault; a quiet network (0-5 ms a leg).
//   - "latency": API calls slowed, every round trip still inside
//     RenewDeadline (a delay fault per candidate, up to RenewDeadline
//     minus the network's own).
//   - "pause": candidates paused (a GC pause, a throttled container)
//     between a leadership check and a write, for up to two
//     LeaseDurations.
//   - "pause-any": pauses that strike at any request a candidate sends,
//     not only at a write: one in two at its next request to the API
//     server after the pause's time (in its renew loop, between a Get and
//     an Update, in its informer), the others at its next write.
//   - "partition": one or two candidates cut off from the API server (each
//     request lost, or applied with its answer lost) for up to two
//     LeaseDurations.
//   - "conflict": the API server answers 409 Conflict, applying nothing,
//     to every update of one or two candidates for a while — the answer a
//     stale resourceVersion gets — and a pause strikes at a write.
//   - "contention": latency within RenewDeadline on every candidate and
//     one candidate crashed (and restarted): the followers race for a
//     Lease whose holder died, with reads and writes far apart — where a
//     store without resourceVersion checks lets two of them win.
//   - "clock": one candidate's clock runs twice as fast from the start
//     while another is cut off from the API server (a partition) for up
//     to two LeaseDurations: the one whose renewals stop landing still
//     believes for RenewDeadline, the fast one's LeaseDuration runs out
//     early (UseClock).
//   - "all": pauses, latency beyond RenewDeadline, partitions from the
//     API server, the API server down, crashes with and without a restart
//     under the same identity.
type Profile string

// Profiles lists them.
var Profiles = []Profile{"none", "latency", "pause", "contention", "clock", "all", "pause-any", "partition", "conflict"}

// ParseProfile reads a profile name.
func ParseProfile(s string) (Profile, error) {
	for _, p := range Profiles {
		if string(p) == s {
			return p, nil
		}
	}
	names := make([]string, len(Profiles))
	for i, p := range Profiles {
		names[i] = string(p)
	}
	return "", fmt.Errorf("unknown fault profile %q (known: %s)", s, strings.Join(names, ", "))
}

// houseTimings converts timings for internal/k8ssweep's generator (nil:
// all of Timings).
func houseTimings(timings []Timing) []k8ssweep.Timing {
	if len(timings) == 0 {
		timings = Timings
	}
	out := make([]k8ssweep.Timing, len(timings))
	for i, t := range timings {
		out[i] = k8ssweep.Timing(t)
	}
	return out
}
