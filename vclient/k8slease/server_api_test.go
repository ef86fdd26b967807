package k8slease

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/internal/k8ssweep"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	utilptr "k8s.io/utils/ptr"
)

// clientset is a clientset as kubernetes.NewForConfig makes it — its
// default content type is protobuf — or, with contentType, one speaking
// that; its requests go through rt.
func clientset(t *testing.T, rt http.RoundTripper, contentType string) *kubernetes.Clientset {
	t.Helper()
	cfg := &rest.Config{Host: "http://kube-apiserver.invalid", Transport: rt, QPS: -1}
	if contentType != "" {
		cfg.ContentConfig = rest.ContentConfig{ContentType: contentType, AcceptContentTypes: contentType}
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// recordingRT serves through d and counts the answers' Content-Types.
type recordingRT struct {
	d        *direct
	answered map[string]int
}

func (r *recordingRT) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.d.RoundTrip(req)
	if err == nil {
		if r.answered == nil {
			r.answered = map[string]int{}
		}
		r.answered[resp.Header.Get("Content-Type")]++
	}
	return resp, err
}

// TestServerSpeaksProtobufAndJSON: a clientset with its default content
// type (protobuf) and one speaking JSON both work the whole API a
// controller uses — Leases and ConfigMaps created, read, listed, updated
// (a stale resourceVersion refused), patched three ways, watched and
// deleted under a precondition; Events of both APIs accepted — and each is
// answered in the media type it asked for.
func TestServerSpeaksProtobufAndJSON(t *testing.T) {
	for _, ct := range []string{"", runtime.ContentTypeJSON} {
		name := map[string]string{"": "protobuf (the default)", runtime.ContentTypeJSON: "json"}[ct]
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			d := &direct{s: k8ssweep.NewServer()}
			rec := &recordingRT{d: d}
			cs := clientset(t, rec, ct)
			leasesC := cs.CoordinationV1().Leases("default")
			w, err := leasesC.Watch(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("watch: %v", err)
			}
			defer w.Stop()
			created, err := leasesC.Create(ctx, lease("a", 15), metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if _, err := leasesC.Create(ctx, lease("b", 15), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
				t.Errorf("create again: %v, want AlreadyExists", err)
			}
			upd := created.DeepCopy()
			upd.Spec.HolderIdentity = ptr("b")
			updated, err := leasesC.Update(ctx, upd, metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("update: %v", err)
			}
			if _, err := leasesC.Update(ctx, upd, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
				t.Errorf("update from a stale copy: %v, want Conflict", err)
			}
			patched, err := leasesC.Patch(ctx, "l", types.MergePatchType, []byte(`{"spec":{"holderIdentity":"c"}}`), metav1.PatchOptions{})
			if err != nil || utilptr.Deref(patched.Spec.HolderIdentity, "") != "c" {
				t.Fatalf("merge patch: %v, %v", patched, err)
			}
			stale := `{"metadata":{"resourceVersion":"` + updated.ResourceVersion + `"},"spec":{"holderIdentity":"d"}}`
			if _, err := leasesC.Patch(ctx, "l", types.MergePatchType, []byte(stale), metav1.PatchOptions{}); !apierrors.IsConflict(err) {
				t.Errorf("a patch stating a stale resourceVersion: %v, want Conflict", err)
			}
			if _, err := leasesC.Patch(ctx, "l", types.StrategicMergePatchType, []byte(`{"spec":{"leaseTransitions":3}}`), metav1.PatchOptions{}); err != nil {
				t.Errorf("strategic merge patch: %v", err)
			}
			jp, err := leasesC.Patch(ctx, "l", types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/holderIdentity","value":"e"}]`), metav1.PatchOptions{})
			if err != nil || utilptr.Deref(jp.Spec.HolderIdentity, "") != "e" || *jp.Spec.LeaseTransitions != 3 {
				t.Errorf("json patch: %+v, %v", jp, err)
			}
			list, err := leasesC.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=l"})
			if err != nil || len(list.Items) != 1 || list.Items[0].ResourceVersion != jp.ResourceVersion {
				t.Errorf("list: %+v, %v", list, err)
			}
			rv := created.ResourceVersion
			if err := leasesC.Delete(ctx, "l", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}}); !apierrors.IsConflict(err) {
				t.Errorf("delete under a stale precondition: %v, want Conflict", err)
			}
			if err := leasesC.Delete(ctx, "l", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &jp.ResourceVersion}}); err != nil {
				t.Errorf("delete: %v", err)
			}
			if _, err := leasesC.Get(ctx, "l", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("get after delete: %v, want NotFound", err)
			}
			var got []string
			for len(got) < 6 {
				select {
				case ev := <-w.ResultChan():
					l, ok := ev.Object.(*coordinationv1.Lease)
					if !ok {
						t.Fatalf("watch event %s of a %T: %+v", ev.Type, ev.Object, ev.Object)
					}
					got = append(got, string(ev.Type)+":"+utilptr.Deref(l.Spec.HolderIdentity, ""))
				case <-ctx.Done():
					t.Fatalf("watch: %v after %v", ctx.Err(), got)
				}
			}
			if want := "ADDED:a MODIFIED:b MODIFIED:c MODIFIED:c MODIFIED:e DELETED:e"; strings.Join(got, " ") != want {
				t.Errorf("watch events %v, want %s", got, want)
			}
			// Stopping the watch ends its stream, with the request's context
			// still live (client-go closes the body).
			w.Stop()
			for open := true; open; {
				select {
				case _, open = <-w.ResultChan():
				case <-time.After(5 * time.Second):
					t.Fatal("the watch's stream did not end when the watch was stopped")
				}
			}

			cms := cs.CoreV1().ConfigMaps("default")
			cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "work"}, Data: map[string]string{"n": "1"}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("configmap create: %v", err)
			}
			cm2 := cm.DeepCopy()
			cm2.Data["n"] = "2"
			if _, err := cms.Update(ctx, cm2, metav1.UpdateOptions{}); err != nil {
				t.Errorf("configmap update: %v", err)
			}
			cm.Data["n"] = "3" // fenced by its own resourceVersion: this copy is stale
			if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
				t.Errorf("configmap update from a stale copy: %v, want Conflict", err)
			}
			if err := cms.Delete(ctx, "work", metav1.DeleteOptions{}); err != nil {
				t.Errorf("configmap delete: %v", err)
			}

			if _, err := cs.CoreV1().Events("default").Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e1"}, Reason: "LeaderElection",
				InvolvedObject: corev1.ObjectReference{Kind: "Lease", Name: "l"}}, metav1.CreateOptions{}); err != nil {
				t.Errorf("core/v1 event: %v", err)
			}
			if _, err := cs.EventsV1().Events("default").Create(ctx, &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e2"}, Reason: "LeaderElection",
				EventTime: metav1.NewMicroTime(time.Unix(0, 0))}, metav1.CreateOptions{}); err != nil {
				t.Errorf("events.k8s.io/v1 event: %v", err)
			}

			want := runtime.ContentTypeProtobuf
			if ct == runtime.ContentTypeJSON {
				want = runtime.ContentTypeJSON
			}
			for got, n := range rec.answered {
				if !strings.HasPrefix(got, want) {
					t.Errorf("%d answers in %s, want %s", n, got, want)
				}
			}
			if len(d.ops) == 0 {
				t.Errorf("nothing recorded of the election's Lease")
			}
		})
	}
}

func ptr(s string) *string { return &s }
