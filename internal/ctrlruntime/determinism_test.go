package ctrlruntime

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/leasecheck/leasecheck/internal/sim"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/vclient/k8slease"
)

func TestMain(m *testing.M) {
	// client-go's event broadcaster logs to klog's global logger, not the
	// manager's: the events a run's shutdown cuts off would fill the output.
	klog.SetLogger(logr.Discard())
	os.Exit(m.Run())
}

// digest is everything a run shows: the history (with fault records), the
// trace, the beliefs and the pauses.
func digest(t *testing.T, r *sim.Result) []byte {
	var b bytes.Buffer
	if err := model.WriteHistory(&b, r.History); err != nil {
		t.Fatal(err)
	}
	for _, e := range r.Trace {
		fmt.Fprintln(&b, e)
	}
	fmt.Fprintln(&b, r.Beliefs, r.Stops)
	return b.Bytes()
}

// TestDeterministic: the same scenario gives the same history, trace and
// beliefs, byte for byte, for both implementations under every profile
// (-seeds N: N seeds a profile; three runs each): the manager's identity
// and client-go's jitter come from the run's seeded source, and the
// harness's ordering, not the goroutines', decides the rest.
func TestDeterministic(t *testing.T) {
	for _, impl := range []string{Unfenced, Fenced} {
		for _, p := range k8slease.Profiles {
			tg, err := Target(t, impl)
			if err != nil {
				t.Fatal(err)
			}
			gen := Generator(impl, p, nil)
			for seed := uint64(1); seed <= uint64(seeds(8)); seed++ {
				sc := gen(seed)
				var first []byte
				for i := range 3 {
					e, err := tg.Run(context.Background(), sc)
					if err != nil {
						t.Fatal(err)
					}
					d := digest(t, e.Sim)
					if i == 0 {
						first = d
						continue
					}
					if !bytes.Equal(first, d) {
						t.Errorf("%s %s seed %d: run %d differs from run 0:\n%s", impl, p, seed, i, firstDiff(first, d))
					}
				}
			}
		}
	}
}

func firstDiff(a, b []byte) string {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range min(len(la), len(lb)) {
		if !bytes.Equal(la[i], lb[i]) {
			return fmt.Sprintf("line %d:\n  %s\n  %s", i+1, la[i], lb[i])
		}
	}
	return "lengths differ"
}

// TestIdentityAndEvents: the manager runs with its default identity
// scheme, hostname_uuid, the UUID drawn from each candidate's seeded
// source (k8slease.SeedUUIDs): a run of a scenario replays byte for byte,
// the history names candidates and never the host, no two managers of a
// run write the same holder string (the API server's door would say so),
// its leader election's Events reach the API server and are accepted, and
// it elects through a Lease (the API server serves no other lock).
func TestIdentityAndEvents(t *testing.T) {
	tg, err := Target(t, Unfenced)
	if err != nil {
		t.Fatal(err)
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	gen := Generator(Unfenced, "all", nil)
	run := func(seed uint64) string {
		e, err := tg.Run(context.Background(), gen(seed))
		if err != nil {
			t.Fatal(err)
		}
		r := e.Sim
		events, grants := 0, 0
		var trace strings.Builder
		for _, e := range r.Trace {
			fmt.Fprintln(&trace, e)
			switch {
			case strings.Contains(e.Detail, "event LeaderElection"):
				events++
				if !strings.Contains(e.Detail, "became leader") && !strings.Contains(e.Detail, "stopped leading") {
					t.Errorf("seed %d: event %q", seed, e.Detail)
				}
			case strings.Contains(e.Detail, "404"), strings.Contains(e.Detail, "the holder string it wrote was"):
				t.Errorf("seed %d: %s", seed, e)
			}
		}
		for _, op := range r.History.Ops {
			if op.Kind == model.Acquire && op.OK {
				grants++
			}
		}
		if grants == 0 || events == 0 {
			t.Errorf("seed %d: %d grants, %d events accepted", seed, grants, events)
		}
		var h bytes.Buffer
		if err := model.WriteHistory(&h, r.History); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(h.String(), host) {
			t.Errorf("seed %d: the host name %q is in the history", seed, host)
		}
		return h.String() + trace.String()
	}
	for seed := uint64(1); seed <= 5; seed++ {
		if a, b := run(seed), run(seed); a != b {
			t.Errorf("seed %d: two runs differ: %s", seed, firstDiff([]byte(a), []byte(b)))
		}
	}
}
