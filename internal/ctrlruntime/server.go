package ctrlruntime

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/leasecheck/leasecheck/internal/k8ssweep"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/vclient"
)

// server is k8slease's Lease API server seen through controller-runtime's
// identities: a manager writes hostname_uuid as the Lease's
// holderIdentity, the history speaks of the candidates ("h1"). At the API
// server's door, the holder a candidate writes is translated to its
// identity (c.Identity) and, in every Lease answered, back to the string
// the manager wrote, so the API server classifies acquires and renewals by
// candidate and each client sees exactly the Lease it would: the server
// keeps one Lease, whose holder is the last applied write's, and that
// write's string is the one shown.
type server struct {
	api *k8ssweep.Server
	// owners maps each holder string a candidate wrote to its identity.
	owners map[string]string
	// shown is the holder string of the last Lease write the API server
	// applied: what the stored Lease's holder stands for.
	shown string
}

func newServer(api *k8ssweep.Server) *server {
	return &server{api: api, owners: map[string]string{}}
}

const leasesPath = "/apis/coordination.k8s.io/v1/namespaces/"

func isLease(req *http.Request) bool {
	rest, ok := strings.CutPrefix(req.URL.Path, leasesPath)
	return ok && strings.Contains(rest, "/leases")
}

// Serve implements vclient.Server.
func (s *server) Serve(now int64, c *vclient.Candidate, req *http.Request, body []byte) (*http.Response, *model.Op, string) {
	if !isLease(req) {
		return s.api.Serve(now, c, req, body)
	}
	write := req.Method == http.MethodPost || req.Method == http.MethodPut
	wrote, note := "", ""
	if write {
		var l coordinationv1.Lease
		if err := json.Unmarshal(body, &l); err == nil {
			wrote = deref(l.Spec.HolderIdentity)
			if wrote != "" {
				if o, ok := s.owners[wrote]; ok && o != c.Identity {
					note = fmt.Sprintf("; holder %q was %s's, written by %s", wrote, o, c.Identity)
				}
				s.owners[wrote] = c.Identity
				id := c.Identity
				l.Spec.HolderIdentity = &id
				if b, err := json.Marshal(&l); err == nil {
					body = b
				}
			}
		}
	}
	resp, op, detail := s.api.Serve(now, c, req, body)
	ok := resp.StatusCode/100 == 2
	if write && ok {
		s.shown = wrote
	}
	if ok && s.shown != "" {
		resp = s.translate(resp)
	}
	return resp, op, detail + note
}

// translate shows the holder string the manager wrote in a Lease answered.
func (s *server) translate(resp *http.Response) *http.Response {
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return vclient.Response(http.StatusInternalServerError, nil)
	}
	var l coordinationv1.Lease
	if json.Unmarshal(b, &l) == nil && l.Kind == "Lease" && deref(l.Spec.HolderIdentity) == s.owners[s.shown] {
		shown := s.shown
		l.Spec.HolderIdentity = &shown
		if nb, err := json.Marshal(&l); err == nil {
			b = nb
		}
	}
	return vclient.Response(resp.StatusCode, b)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
