package k8slease

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"

	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/k8ssweep"
	"github.com/leasecheck/leasecheck/internal/runprop"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/vclient"
)

// direct serves client-go's requests with the Server at once, outside
// the harness: the store's own contract, through client-go's own client.
type direct struct {
	s   *k8ssweep.Server
	now int64
	ops []*model.Op
}

func (d *direct) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
	}
	d.now++
	resp, op, _ := d.s.Serve(d.now, &vclient.Candidate{Identity: req.Header.Get("X-Identity")}, req, body)
	if op != nil {
		d.ops = append(d.ops, op)
	}
	resp.Request = req
	return resp, nil
}

func leases(t *testing.T, d *direct) coordinationv1client.LeaseInterface {
	cfg := &rest.Config{Host: "http://kube-apiserver.invalid", Transport: d, QPS: -1,
		ContentConfig: rest.ContentConfig{ContentType: "application/json", AcceptContentTypes: "application/json"}}
	cs, err := coordinationv1client.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs.Leases("default")
}

func lease(holder string, seconds int32) *coordinationv1.Lease {
	now := metav1.NowMicro()
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "l", Namespace: "default"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, RenewTime: &now, AcquireTime: &now}}
}

// TestServerRefusesStaleUpdate: the Lease store enforces resourceVersion
// on every update, as the API server does (client-go's fake clientset does
// not), and answers the other errors leader election relies on, each as
// the apierrors client-go decodes; its planted bug accepts the stale
// update.
func TestServerRefusesStaleUpdate(t *testing.T) {
	ctx := context.Background()
	for _, stale := range []bool{false, true} {
		d := &direct{s: k8ssweep.NewServer()}
		d.s.AcceptStale = stale
		l := leases(t, d)
		if _, err := l.Get(ctx, "l", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("Get of a missing lease: err = %v, want NotFound", err)
		}
		if _, err := l.Create(ctx, lease("a", 0), metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("Create with leaseDurationSeconds 0: err = %v, want Invalid", err)
		}
		created, err := l.Create(ctx, lease("a", 15), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Create(ctx, lease("b", 15), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
			t.Errorf("Create of an existing lease: err = %v, want AlreadyExists", err)
		}
		got, err := l.Get(ctx, "l", metav1.GetOptions{})
		if err != nil || got.ResourceVersion != created.ResourceVersion || *got.Spec.HolderIdentity != "a" {
			t.Fatalf("Get = %+v, %v; want holder a at resourceVersion %s", got, err, created.ResourceVersion)
		}
		// a renews from its current copy: accepted, a new resourceVersion.
		upd := got.DeepCopy()
		upd.Spec = lease("a", 15).Spec
		renewed, err := l.Update(ctx, upd, metav1.UpdateOptions{})
		if err != nil || renewed.ResourceVersion == got.ResourceVersion {
			t.Fatalf("Update from the current copy = %v, %v; want accepted with a new resourceVersion", renewed, err)
		}
		// b takes over from the copy it read before a's renewal: stale.
		takeover := got.DeepCopy()
		takeover.Spec = lease("b", 15).Spec
		_, err = l.Update(ctx, takeover, metav1.UpdateOptions{})
		switch {
		case !stale && !apierrors.IsConflict(err):
			t.Errorf("Update with stale resourceVersion %s (current %s): err = %v, want Conflict", got.ResourceVersion, renewed.ResourceVersion, err)
		case stale && err != nil:
			t.Errorf("k8ssweep.AcceptStale: Update with a stale resourceVersion: err = %v, want it applied (the planted bug)", err)
		}
		after, _ := l.Get(ctx, "l", metav1.GetOptions{})
		if want := map[bool]string{false: "a", true: "b"}[stale]; *after.Spec.HolderIdentity != want {
			t.Errorf("k8ssweep.AcceptStale=%v: holder after the stale update = %s, want %s", stale, *after.Spec.HolderIdentity, want)
		}
	}
}

// TestAcceptStaleCaughtAsDoubleLeader: the planted bug — a Lease store
// that applies updates with a stale resourceVersion, as client-go's fake
// clientset does — is caught: followers racing for a dead leader's Lease
// both win and both lead (exclusive-belief, and two grants at once). The
// correct store on the same seeds: no violation.
func TestAcceptStaleCaughtAsDoubleLeader(t *testing.T) {
	n := seeds(300)
	bug := sweep(t, k8ssweep.AcceptStale, "contention", safeTimings(), n, func(c *campaign.Config) { c.FailFast = true })
	if len(bug.failures) == 0 {
		t.Fatalf("the planted bug (stale updates accepted) was not caught in %d seeds", n)
	}
	f := bug.failures[0]
	if !f.Outcome.Fails(runprop.ExclusiveBelief) {
		var b strings.Builder
		campaign.WriteOutcome(&b, f.Outcome)
		t.Errorf("seed %d: the planted bug violates %v, not %s:\n%s", f.Seed, f.Outcome.Failed(), runprop.ExclusiveBelief, b.String())
	}
	var b bytes.Buffer
	campaign.WriteOutcome(&b, f.Outcome)
	t.Logf("caught at seed %d:\n%s", f.Seed, b.String())
	// The correct store on the same seeds: clean.
	sweep(t, k8ssweep.Unfenced, "contention", safeTimings(), n, nil).clean(t, "the correct store, same seeds")
}
