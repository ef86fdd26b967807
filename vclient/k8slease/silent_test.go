package k8slease

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/k8ssweep"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/vclient"
)

// TestNothingSilentlyGreen: the elector on a clientset's default content
// type (protobuf). Against the server, the sweep elects and writes; against
// a server that speaks JSON only (the planted limitation, JSONOnly), every
// write of the Lease fails, no lease is granted, and the sweep is an error
// (exit 2) naming the first failed request and its content type — not
// "OK: every property held".
func TestNothingSilentlyGreen(t *testing.T) {
	run := func(jsonOnly bool) *campaign.Summary {
		tg := &vclient.Target{T: t, Name: "vclient:k8slease-protobuf", Client: &elector{ContentType: runtime.ContentTypeProtobuf},
			Options: vclient.Options{Fences: model.NoFences, AdvisoryBelief: true,
				Server: func() vclient.Server { s := k8ssweep.NewServer(); s.JSONOnly = jsonOnly; return s }}}
		sum, err := campaign.Run(context.Background(), campaign.Config{Target: tg, Scenario: testGenerator(k8ssweep.Unfenced, "none", Timings[:1]),
			Kinds: k8ssweep.Profile("none").Kinds(), Seeds: seeds(10), First: 1, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	ok := run(false)
	if err := ok.Unexercised(); err != nil || ok.Grants == 0 || ok.Status() != campaign.ExitOK {
		t.Errorf("protobuf client, the server: %v; %d grants, status %d; want elections and exit 0", err, ok.Grants, ok.Status())
	}
	idle := run(true)
	var b strings.Builder
	idle.WriteText(&b, 0)
	err := idle.Unexercised()
	if idle.Status() != campaign.ExitUsage || err == nil || !strings.Contains(err.Error(), runtime.ContentTypeProtobuf) ||
		!strings.Contains(err.Error(), "415") || strings.Contains(b.String(), "OK:") {
		t.Errorf("protobuf client, a JSON-only server: status %d, %v; want exit 2 naming the content type and the 415:\n%s", idle.Status(), err, b.String())
	}
	t.Logf("JSON-only server: %v", err)
}
