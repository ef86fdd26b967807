package k8slease

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/k8ssweep"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/vclient"
)

// askingClient GETs each path once, in order, through the harness, and
// does nothing else: a client whose every request fails.
type askingClient struct{ paths []string }

func (a *askingClient) Start(ctx context.Context, c *vclient.Candidate) {
	cl := &http.Client{Transport: c.Transport()}
	for _, p := range a.paths {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://kube-apiserver.invalid"+p, nil)
		if err != nil {
			return
		}
		if resp, err := cl.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	<-ctx.Done()
}

// TestUnservedNamed: a sweep that exercised nothing names, as its cause, a
// request for a resource the API server does not serve (here the v1alpha2
// LeaseCandidates of an older client-go), not the NotFound of the Lease
// GET before it, which a lease protocol expects; with no such request, that
// NotFound is still the cause named.
func TestUnservedNamed(t *testing.T) {
	const lease = "/apis/coordination.k8s.io/v1/namespaces/default/leases/x"
	const alpha = "/apis/coordination.k8s.io/v1alpha2/namespaces/default/leasecandidates/h1"
	run := func(paths ...string) error {
		tg := &vclient.Target{T: t, Name: "vclient:asking", Client: &askingClient{paths: paths},
			Options: vclient.Options{Fences: model.NoFences, Server: func() vclient.Server { return k8ssweep.NewServer() }}}
		sum, err := campaign.Run(context.Background(), campaign.Config{Target: tg, Scenario: testGenerator(k8ssweep.Unfenced, "none", Timings[:1]),
			Kinds: k8ssweep.Profile("none").Kinds(), Seeds: 2, First: 1, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		return sum.Unexercised()
	}
	err := run(lease, alpha)
	if err == nil || !strings.Contains(err.Error(), alpha) || !strings.Contains(err.Error(), "does not serve") {
		t.Errorf("a Lease GET's 404, then an unserved resource's: %v; want the unserved one named", err)
	}
	err = run(lease)
	if err == nil || !strings.Contains(err.Error(), lease) {
		t.Errorf("a Lease GET's 404 alone: %v; want it named", err)
	}
	t.Logf("named: %v", run(lease, alpha))
}
