package k8scontroller

// The controller's tests: controller.go is swept as it ships, with no
// leasecheck import and no hook in it. What a sweep needs it gets from the
// outside — the rest.Config (the candidate's transport to leasecheck's API
// server), the identity, the work (which tells the harness what it writes
// and when it believes it leads) and client-go's jitter, drawn from the
// run's seed. Time needs no hook: a sweep runs in a testing/synctest
// bubble, where time.Now and every timer are virtual, so client-go's own
// clock.RealClock and its wait loops run on the run's time as they are.
//
//	go test -run TestSweep -k8slease.seeds 1000 -k8slease.profile pause
//	go test -run TestSweepUnfenced -k8slease.save DIR

import (
	"context"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/vclient"
	"github.com/leasecheck/leasecheck/vclient/k8slease"
)

// replica runs the controller as a Pod would: Run, and once it returned
// (leadership lost) Run again, as the kubelet restarts the container,
// until the candidate's context ends. Its work writes once a second under
// the context leadership gave it; fenced, each write carries the
// resourceVersion of the Lease update that made this replica the holder,
// read off the API server's answers by a transport wrapped around the
// rest.Config's (k8slease.TokenTransport), not by the controller.
type replica struct {
	fenced bool
	// neverReturns makes Start ignore its context's end once Run
	// returned: the leak a sweep must name.
	neverReturns bool
}

// Use makes client-go's jitter draw from the run's seed (vclient.RandUser).
func (r *replica) Use(rng *rand.Rand) (undo func()) { return k8slease.UseJitter(rng) }

func (r *replica) Start(ctx context.Context, c *vclient.Candidate) {
	for ctx.Err() == nil {
		rt, token := k8slease.TokenTransport(c.Transport(), c.Identity)
		err := Run(ctx, Config{
			Rest:      &rest.Config{Host: "http://kube-apiserver.invalid", Transport: rt},
			Namespace: "default", Lease: "my-controller", Identity: c.Identity,
			Work: func(ctx context.Context) {
				c.Leading("OnStartedLeading")
				defer c.Stopped("the end of OnStartedLeading's context")
				for {
					select {
					case <-ctx.Done():
						return
					case <-time.After(time.Second):
					}
					var fence int64
					if r.fenced {
						if fence = token(); fence == 0 {
							continue // no token yet: the fenced store takes no write without one
						}
					}
					c.Write(ctx, "", fence)
				}
			},
		})
		if err != nil {
			c.Trace("refused", err.Error())
			return
		}
		if r.neverReturns {
			<-make(chan struct{})
		}
	}
}

var timing = k8slease.Timing{Name: "k8scontroller", LeaseDuration: 15000, RenewDeadline: 10000, RetryPeriod: 2000}

func config(fenced bool) k8slease.SweepConfig {
	cfg := k8slease.SweepConfig{Name: "vclient:k8scontroller", Client: &replica{}, Timing: &timing, Seeds: 30}
	if fenced {
		cfg.Name, cfg.Client, cfg.Fenced, cfg.Tokens = "vclient:k8scontroller-fenced", &replica{fenced: true}, true, model.GrantTokens
	}
	return cfg
}

// TestProductionFileKnowsNoLeasecheck: the file the controller ships in
// imports nothing of leasecheck — the sweeps below test it unchanged.
func TestProductionFileKnowsNoLeasecheck(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "controller.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Imports) == 0 {
		t.Fatal("controller.go imports nothing: not the controller")
	}
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if strings.HasPrefix(p, "github.com/leasecheck/") {
			t.Errorf("controller.go imports %s", p)
		}
	}
}

// TestSweep: fenced, the controller is clean under the profile
// -k8slease.profile names (pauses by default), and the sweep exercised it
// (Sweep fails a sweep that elected or wrote nothing, or whose faults
// never struck).
func TestSweep(t *testing.T) {
	k8slease.Sweep(t, config(true))
}

// TestSweepUnfenced: unfenced, under pauses, the sweep finds the zombie
// write the store accepted after the Lease moved on.
func TestSweepUnfenced(t *testing.T) {
	cfg := config(false)
	cfg.Profile, cfg.Want, cfg.Seeds, cfg.FailFast, cfg.MaxSaved = "pause", k8slease.WantViolation, 100, true, 1
	k8slease.Sweep(t, cfg)
}

// TestSkewedClockNotReached: the one fault that needs a hook. A skewed
// clock is a candidate's own (vclient.Candidate.Clock) and the bubble has
// one time, so it reaches client-go's elector only through the elector's
// clock field (k8slease.UseClock, given the elector before Run); this
// controller keeps its elector to itself, and a sweep under the clock
// profile says the skew never struck — an error, not a pass on true time.
func TestSkewedClockNotReached(t *testing.T) {
	cfg := config(true)
	cfg.Profile, cfg.Want, cfg.Seeds = "clock", k8slease.WantResult, 5
	r := k8slease.Sweep(t, cfg)
	err := r.Summary.Unexercised()
	if err == nil || !strings.Contains(err.Error(), "clock-drift") {
		t.Fatalf("a clock profile over an elector that never read the candidate's clock: %v; want an error naming clock-drift", err)
	}
	t.Log(err)
}

// TestStartThatNeverReturnsNamed: a replica whose Start does not return
// once its context ended ends the sweep in leasecheck's error — the seed,
// the stuck incarnation, its stack — not in synctest's deadlock. (The
// sweep fails its test, so it runs in a child process.) The same replica
// returning is TestSweep.
func TestStartThatNeverReturnsNamed(t *testing.T) {
	if os.Getenv("K8SCONTROLLER_STUCK") != "" {
		cfg := config(true)
		cfg.Client, cfg.Seeds, cfg.Profile = &replica{fenced: true, neverReturns: true}, 1, "none"
		k8slease.Sweep(t, cfg)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestStartThatNeverReturnsNamed$", "-test.count=1")
	cmd.Env = append(os.Environ(), "K8SCONTROLLER_STUCK=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the stuck replica's sweep passed:\n%s", out)
	}
	for _, want := range []string{"seed 1: vclient: seed 1 (vclient:k8scontroller-fenced)", "had not returned", "after its context ended",
		"(*replica).Start", "controller_test.go"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the failure lacks %q:\n%s", want, out)
		}
	}
	for _, not := range []string{"deadlock", "panic:"} {
		if strings.Contains(string(out), not) {
			t.Errorf("the failure tells %q:\n%s", not, out)
		}
	}
}
