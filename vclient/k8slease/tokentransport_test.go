package k8slease

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// answering is a transport that answers every request with one encoded
// object in one media type.
type answering struct {
	mediaType string
	obj       runtime.Object
}

func (a answering) RoundTrip(req *http.Request) (*http.Response, error) {
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), a.mediaType)
	if !ok {
		panic("no serializer for " + a.mediaType)
	}
	var b bytes.Buffer
	if err := scheme.Codecs.EncoderForVersion(info.Serializer, schema.GroupVersions{coordinationv1.SchemeGroupVersion, corev1.SchemeGroupVersion}).Encode(a.obj, &b); err != nil {
		return nil, err
	}
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Type", a.mediaType)
	rec.WriteHeader(http.StatusOK)
	rec.Body = &b
	return rec.Result(), nil
}

// TestTokenTransportReadsBothMediaTypes: the acquiring update's
// resourceVersion is learned from a Lease answered in protobuf (a default
// clientset's content type) as from one in JSON, the body still reaches
// the client whole, and an answer that is no Lease of ours teaches nothing.
func TestTokenTransportReadsBothMediaTypes(t *testing.T) {
	h1, h2 := "h1", "h2"
	lease := func(holder *string, rv string) *coordinationv1.Lease {
		return &coordinationv1.Lease{TypeMeta: metav1.TypeMeta{Kind: "Lease", APIVersion: "coordination.k8s.io/v1"},
			ObjectMeta: metav1.ObjectMeta{Name: "lease", Namespace: "default", ResourceVersion: rv},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: holder}}
	}
	for _, mt := range []string{"application/vnd.kubernetes.protobuf", "application/json"} {
		t.Run(mt, func(t *testing.T) {
			for _, c := range []struct {
				name string
				obj  runtime.Object
				want int64
			}{
				{"our update", lease(&h1, "42"), 42},
				{"another's", lease(&h2, "43"), 0},
				{"a ConfigMap", &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "x", ResourceVersion: "44"}}, 0},
			} {
				rt, token := TokenTransport(answering{mt, c.obj}, h1)
				req, _ := http.NewRequest(http.MethodPut, "http://api/apis/coordination.k8s.io/v1/namespaces/default/leases/lease", nil)
				resp, err := rt.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				if len(body) == 0 {
					t.Errorf("%s: the client got an empty body", c.name)
				}
				if got := token(); got != c.want {
					t.Errorf("%s: token %d, want %d", c.name, got, c.want)
				}
			}
		})
	}
}
