package k8ssweep

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leasecheck/leasecheck/vclient"
)

// controllerHarness drives a Server's requests by hand, at chosen times.
type controllerHarness struct {
	t *testing.T
	s *Server
}

func (h *controllerHarness) do(now int64, who, method, path string, body any) []byte {
	h.t.Helper()
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			h.t.Fatal(err)
		}
	}
	req, err := http.NewRequest(method, "http://apiserver"+path, bytes.NewReader(b))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	c := &vclient.Candidate{Name: who, Node: who, Identity: who, TTL: 15000}
	resp, _, _ := h.s.Serve(now, c, req, b)
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 && resp.StatusCode != http.StatusNotFound {
		h.t.Fatalf("%s %s at t=%d: %d %s", method, path, now, resp.StatusCode, out)
	}
	return out
}

const (
	candidatesPath = "/apis/coordination.k8s.io/v1beta1/namespaces/default/leasecandidates"
	leasePath      = "/apis/coordination.k8s.io/v1/namespaces/default/leases/ctl"
)

func (h *controllerHarness) register(now int64, name, binary, emulation string) {
	rt := metav1.NewMicroTime(wall(now))
	h.do(now, name, http.MethodPost, candidatesPath, &coordinationv1beta1.LeaseCandidate{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: coordinationv1beta1.LeaseCandidateSpec{LeaseName: "ctl", BinaryVersion: binary, EmulationVersion: emulation,
			Strategy: coordinationv1.OldestEmulationVersion, RenewTime: &rt}})
}

// answerPing renews name's LeaseCandidate at now, as client-go's candidate
// does when it sees a pingTime after its renewTime.
func (h *controllerHarness) answerPing(now int64, name string) { h.renew(now, name, true) }

// renew renews name's LeaseCandidate at now (pinged: it must have been).
func (h *controllerHarness) renew(now int64, name string, pinged bool) {
	var lc coordinationv1beta1.LeaseCandidate
	if err := json.Unmarshal(h.do(now, name, http.MethodGet, candidatesPath+"/"+name, nil), &lc); err != nil {
		h.t.Fatal(err)
	}
	if pinged && lc.Spec.PingTime == nil {
		h.t.Fatalf("t=%d: %s was not pinged", now, name)
	}
	rt := metav1.NewMicroTime(wall(now))
	lc.Spec.RenewTime = &rt
	h.do(now, name, http.MethodPut, candidatesPath+"/"+name, &lc)
}

func (h *controllerHarness) lease(now int64) (holder, preferred string, transitions int32) {
	var l coordinationv1.Lease
	b := h.do(now, "reader", http.MethodGet, leasePath, nil)
	if err := json.Unmarshal(b, &l); err != nil || l.Name == "" {
		return "", "", -1
	}
	if l.Spec.LeaseTransitions != nil {
		transitions = *l.Spec.LeaseTransitions
	}
	return deref(l.Spec.HolderIdentity), deref(l.Spec.PreferredHolder), transitions
}

// TestCoordinatingController walks the controller through an election and
// a preemption: it creates the Lease for the one candidate there is; a
// better candidate registering marks the holder's term ended
// (preferredHolder) but never replaces it while its Lease is live; once the
// Lease ran out it pings the stale candidates, passes over the one that
// does not answer, and hands the Lease to the best that did.
func TestCoordinatingController(t *testing.T) {
	h := &controllerHarness{t: t, s: NewServer()}
	if holder, _, _ := h.lease(0); holder != "" {
		t.Fatalf("a Lease before any candidate: held by %q", holder)
	}
	h.register(1, "h1", "1.35.0", "1.35.0")
	if holder, pref, _ := h.lease(2); holder != "h1" || pref != "" {
		t.Fatalf("t=2: holder %q, preferred %q; want h1, none", holder, pref)
	}
	h.register(2000, "h3", "1.34.0", "1.34.0") // emulates an older version: better
	h.register(2000, "h2", "1.35.0", "1.34.0") // as old an emulation, a later binary: worse than h3
	if holder, pref, _ := h.lease(2001); holder != "h1" || pref != "h3" {
		t.Fatalf("t=2001: holder %q, preferred %q; want h1 marked for h3", holder, pref)
	}
	// The Lease (renewed at t=2 by nobody since) is live until t=15002.
	if holder, _, _ := h.lease(15001); holder != "h1" {
		t.Fatalf("t=15001: the live Lease was handed to %q", holder)
	}
	// Run out: every candidate is stale (none renewed within 15s), so the
	// election pings them first and elects nobody yet.
	if holder, _, _ := h.lease(17100); holder != "h1" {
		t.Fatalf("t=17100: elected %q before the pinged could answer", holder)
	}
	h.answerPing(17200, "h2")
	h.answerPing(17300, "h1")
	// h3, the best, does not answer (crashed): passed over for h2.
	wait := pingWait(15 * time.Second).Milliseconds()
	if holder, _, _ := h.lease(17100 + wait - 1); holder != "h1" {
		t.Fatalf("elected %q before the ping wait ended", holder)
	}
	holder, pref, tr := h.lease(17100 + wait)
	if holder != "h2" || pref != "" || tr != 1 {
		t.Fatalf("after the ping wait: holder %q, preferred %q, transitions %d; want h2, none, 1", holder, pref, tr)
	}
}

// TestCoordinatingControllerStrategies: candidates whose latest binary
// version states two strategies leave the Lease alone; an invalid
// candidate (emulating a version above its binary's) is never elected.
func TestCoordinatingControllerStrategies(t *testing.T) {
	h := &controllerHarness{t: t, s: NewServer()}
	h.register(1, "bad", "1.33.0", "1.36.0")
	h.register(1, "h1", "1.35.0", "1.35.0")
	if holder, _, _ := h.lease(2); holder != "h1" {
		t.Fatalf("holder %q; want h1, the only valid candidate", holder)
	}
	h2 := &controllerHarness{t: t, s: NewServer()}
	rt := metav1.NewMicroTime(wall(1))
	h2.do(1, "h2", http.MethodPost, candidatesPath, &coordinationv1beta1.LeaseCandidate{
		ObjectMeta: metav1.ObjectMeta{Name: "h2", Namespace: "default"},
		Spec: coordinationv1beta1.LeaseCandidateSpec{LeaseName: "ctl", BinaryVersion: "1.35.0", EmulationVersion: "1.35.0",
			Strategy: "SomethingElse", RenewTime: &rt}})
	h2.register(1, "h1", "1.35.0", "1.35.0")
	if holder, _, tr := h2.lease(2); tr != -1 {
		t.Fatalf("conflicting strategies: a Lease held by %q; want none", holder)
	}
}

// TestCoordinatingControllerLateRenewal: a renewal stamped before a pause
// and applied after it renews the Lease from when it was applied — the
// time the server observed its renewTime change — not from its stamp:
// judged by the stamp, the controller would hand the Lease over while its
// holder's renewal is live.
func TestCoordinatingControllerLateRenewal(t *testing.T) {
	for _, stamped := range []bool{false, true} {
		holder := lateRenewal(t, stamped)
		if !stamped && holder != "h1" {
			t.Errorf("observed expiry: the Lease went to %q at t=24999 while h1's renewal applied at t=10s was live", holder)
		}
		if stamped && holder != "h3" {
			t.Errorf("stamped expiry: holder %q at t=24999; want h3, handed over on the renewal's stale stamp", holder)
		}
	}
}

// lateRenewal runs the late renewal and returns the holder at t=24999.
func lateRenewal(t *testing.T, stamped bool) string {
	h := &controllerHarness{t: t, s: NewServer()}
	h.s.StampExpiry = stamped
	h.register(1, "h1", "1.35.0", "1.35.0")
	h.lease(2)
	var l coordinationv1.Lease
	if err := json.Unmarshal(h.do(10000, "h1", http.MethodGet, leasePath, nil), &l); err != nil {
		t.Fatal(err)
	}
	stamp := metav1.NewMicroTime(wall(500)) // stamped at t=0.5s, applied at t=10s
	l.Spec.RenewTime = &stamp
	h.do(10000, "h1", http.MethodPut, leasePath, &l)
	h.register(10001, "h3", "1.34.0", "1.34.0")
	if holder, pref, _ := h.lease(10002); holder != "h1" || pref != "h3" {
		t.Fatalf("t=10002: holder %q, preferred %q; want h1 marked for h3", holder, pref)
	}
	// The stamp ran out at t=15.5s; the renewal runs to t=25s.
	h.lease(16000)
	h.renew(16100, "h3", false)
	holder, _, _ := h.lease(24999)
	return holder
}
