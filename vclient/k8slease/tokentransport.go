package k8slease

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
)

// TokenTransport wraps rt, a Kubernetes client's transport, so that the
// Lease answers it carries teach a token (Tokens' TokenAcquired): the
// resourceVersion of the Lease create or update that made identity the
// holder, 0 while another holds it (or before any); the function returned
// reads it. It is for a client whose lock is built where the user cannot
// wrap the typed client — controller-runtime's manager builds its own from
// the rest.Config — and reads what the API server answered, at the user's
// side of the API (a rest.Config's WrapTransport). JSON answers only.
func TokenTransport(rt http.RoundTripper, identity string) (http.RoundTripper, func() int64) {
	tok := NewTokens(identity)
	return tokenTransport{rt, tok}, func() int64 { return tok.Token(TokenAcquired) }
}

type tokenTransport struct {
	rt  http.RoundTripper
	tok *Tokens
}

func (t tokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if err != nil || resp.StatusCode/100 != 2 || !strings.HasPrefix(req.URL.Path, "/apis/coordination.k8s.io/v1/namespaces/") ||
		!strings.Contains(resp.Header.Get("Content-Type"), "json") {
		return resp, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	var l coordinationv1.Lease
	if json.Unmarshal(b, &l) == nil && l.Kind == "Lease" {
		t.tok.observe(&l, req.Method == http.MethodPost || req.Method == http.MethodPut)
	}
	return resp, nil
}
