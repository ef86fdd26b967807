package k8slease

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/client-go/kubernetes/scheme"
)

// TokenTransport wraps rt, a Kubernetes client's transport, so that the
// Lease answers it carries teach a token (Tokens' TokenAcquired): the
// resourceVersion of the Lease create or update that made identity the
// holder, 0 while another holds it (or before any); the function returned
// reads it. It is for a client whose lock is built where the user cannot
// wrap the typed client — controller-runtime's manager builds its own from
// the rest.Config — and reads what the API server answered, at the user's
// side of the API (a rest.Config's WrapTransport). Answers in JSON or in
// protobuf (application/vnd.kubernetes.protobuf, a default clientset's
// content type) are read, with client-go's own decoders. An empty
// identity is learned from the client's own Lease writes: the holder its
// first create or update of a Lease names (controller-runtime's manager
// makes its identity itself, hostname_uuid, and says it nowhere else).
func TokenTransport(rt http.RoundTripper, identity string) (http.RoundTripper, func() int64) {
	tok := NewTokens(identity)
	return tokenTransport{rt, tok}, func() int64 { return tok.Token(TokenAcquired) }
}

type tokenTransport struct {
	rt  http.RoundTripper
	tok *Tokens
}

func (t tokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.tok.identity() == "" && req.Body != nil && (req.Method == http.MethodPost || req.Method == http.MethodPut) &&
		strings.HasPrefix(req.URL.Path, "/apis/coordination.k8s.io/v1/namespaces/") {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		obj, _, derr := scheme.Codecs.UniversalDeserializer().Decode(b, nil, nil)
		if l, ok := obj.(*coordinationv1.Lease); derr == nil && ok && l.Spec.HolderIdentity != nil {
			t.tok.learn(*l.Spec.HolderIdentity)
		}
	}
	resp, err := t.rt.RoundTrip(req)
	if err != nil || resp.StatusCode/100 != 2 || !strings.HasPrefix(req.URL.Path, "/apis/coordination.k8s.io/v1/namespaces/") {
		return resp, err
	}
	mt, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "application/json" && mt != "application/vnd.kubernetes.protobuf" || params["stream"] != "" || req.URL.Query().Get("watch") != "" {
		return resp, nil // a watch stream, or a type no Lease answer comes in
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	// The universal deserializer reads either media type (protobuf through
	// k8s.io/api's generated Unmarshal) into the scheme's typed objects.
	obj, _, derr := scheme.Codecs.UniversalDeserializer().Decode(b, nil, nil)
	if l, ok := obj.(*coordinationv1.Lease); derr == nil && ok {
		t.tok.observe(l, req.Method == http.MethodPost || req.Method == http.MethodPut)
	}
	return resp, nil
}
