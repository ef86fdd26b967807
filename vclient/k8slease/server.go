package k8slease

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/vclient"
)

// Server is an in-process Kubernetes API server for one resource kind,
// coordination.k8s.io/v1 Leases, as client-go's typed client reaches it
// over HTTP: GET, POST (create) and PUT (update) of
// /apis/coordination.k8s.io/v1/namespaces/NS/leases[/NAME], JSON bodies,
// errors as metav1.Status. It behaves as the real one does where it
// matters to leader election:
//
//   - every write bumps metadata.resourceVersion, and an update whose
//     resourceVersion is not the current one is refused with 409 Conflict
//     (optimistic concurrency: etcd's compare-and-swap under the API
//     server). client-go's fake clientset does not enforce this; a store
//     built on it would manufacture double leaders (AcceptStale plants
//     exactly that bug);
//   - a create of a lease that exists is refused with 409 AlreadyExists,
//     a get or update of one that does not with 404 NotFound;
//   - a spec with leaseDurationSeconds <= 0 is refused with 422 Invalid
//     (the API server's validation): client-go truncates LeaseDuration to
//     whole seconds, so a sub-second LeaseDuration cannot take a lease.
//
// It records what each request did to the lease in the history's terms:
// an update or create that makes an identity the holder is an acquire
// (fence: the resourceVersion it wrote, when fenced), one by the holder
// whose lease is still live is a renew, one that clears the holder is a
// release. The API server never expires a lease — its expiry is the
// candidates' rule, LeaseDuration after they last saw it change — so an
// update by the holder after its lease's duration ran out is recorded as
// the acquire it is in the article's terms (the same owner may take an
// expired lease again). A refused compare-and-swap is recorded only where
// the lease's state explains the refusal (a renew by one who is no longer
// the holder, an acquire of a lease another holds live); one refused only
// because the client's copy was stale, while the lease is its own or free,
// did nothing to the lease and is left to the trace.
type Server struct {
	// AcceptStale is the planted bug: updates are applied whatever
	// resourceVersion they carry, as client-go's fake clientset does.
	AcceptStale bool
	// Fenced numbers grants by resourceVersion in the history.
	Fenced bool

	lease    *coordinationv1.Lease
	rv       int64
	versions map[string]string // resourceVersion -> holder it recorded

	// The lease in the article's terms, for classifying.
	holder string
	expiry int64
}

// NewServer returns an empty store.
func NewServer() *Server { return &Server{versions: map[string]string{}} }

const leasesPrefix = "/apis/coordination.k8s.io/v1/namespaces/"

var leasesGR = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}

// Serve implements vclient.Server.
func (s *Server) Serve(now int64, c *vclient.Candidate, req *http.Request, body []byte) (*http.Response, *model.Op, string) {
	if resp, detail, ok := serveEvent(req, body); ok {
		return resp, nil, detail
	}
	rest, ok := strings.CutPrefix(req.URL.Path, leasesPrefix)
	parts := strings.Split(rest, "/")
	if !ok || len(parts) < 2 || parts[1] != "leases" || len(parts) > 3 {
		return status(apierrors.NewNotFound(schema.GroupResource{}, req.URL.Path)), nil, "404 " + req.URL.Path
	}
	name := ""
	if len(parts) == 3 {
		name = parts[2]
	}
	switch {
	case req.Method == http.MethodGet && name != "":
		if s.lease == nil || s.lease.Name != name {
			return status(apierrors.NewNotFound(leasesGR, name)), nil, ""
		}
		return object(http.StatusOK, s.lease), nil, ""
	case req.Method == http.MethodPost && name == "":
		return s.create(now, c, body)
	case req.Method == http.MethodPut && name != "":
		return s.update(now, c, name, body)
	}
	return status(apierrors.NewMethodNotSupported(leasesGR, req.Method)), nil, "405 " + req.Method
}

func (s *Server) create(now int64, c *vclient.Candidate, body []byte) (*http.Response, *model.Op, string) {
	var l coordinationv1.Lease
	if err := json.Unmarshal(body, &l); err != nil {
		return status(apierrors.NewBadRequest(err.Error())), nil, "400 create: " + err.Error()
	}
	if err := validate(&l); err != nil {
		return status(err), nil, "422 create: " + err.Error()
	}
	holder := deref(l.Spec.HolderIdentity)
	if s.lease != nil {
		var op *model.Op
		if s.heldLive(now, c.Identity) {
			op = &model.Op{Kind: model.Acquire, Owner: c.Identity, TTL: ttl(&l), Error: "held"}
		}
		return status(apierrors.NewAlreadyExists(leasesGR, l.Name)), op, "409 create: the lease exists"
	}
	s.lease = &l
	return s.apply(now, c, &l, http.StatusCreated, holder, "")
}

func (s *Server) update(now int64, c *vclient.Candidate, name string, body []byte) (*http.Response, *model.Op, string) {
	var l coordinationv1.Lease
	if err := json.Unmarshal(body, &l); err != nil {
		return status(apierrors.NewBadRequest(err.Error())), nil, "400 update: " + err.Error()
	}
	if s.lease == nil || s.lease.Name != name || l.Name != name {
		return status(apierrors.NewNotFound(leasesGR, name)), nil, "404 update " + name
	}
	if err := validate(&l); err != nil {
		return status(err), nil, "422 update: " + err.Error()
	}
	holder := deref(l.Spec.HolderIdentity)
	read := l.ResourceVersion
	if read != "" && read != s.lease.ResourceVersion && !s.AcceptStale {
		err := apierrors.NewConflict(leasesGR, name, fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
		return status(err), s.refused(now, c, &l, read, holder), fmt.Sprintf("409 update: resourceVersion %s, current %s", read, s.lease.ResourceVersion)
	}
	detail := ""
	if read != "" && read != s.lease.ResourceVersion {
		detail = fmt.Sprintf("stale update accepted (resourceVersion %s, current %s): the planted bug", read, s.lease.ResourceVersion)
	}
	// What the API server keeps of the object: its identity and metadata
	// are the stored ones; the spec and labels are the client's.
	stored := s.lease.DeepCopy()
	stored.Spec = l.Spec
	stored.Labels = l.Labels
	s.lease = stored
	return s.apply(now, c, stored, http.StatusOK, holder, detail)
}

// apply stores l with a new resourceVersion and says what it did.
func (s *Server) apply(now int64, c *vclient.Candidate, l *coordinationv1.Lease, code int, holder, detail string) (*http.Response, *model.Op, string) {
	s.rv++
	l.ResourceVersion = strconv.FormatInt(s.rv, 10)
	l.Kind, l.APIVersion = "Lease", "coordination.k8s.io/v1"
	if l.Namespace == "" {
		l.Namespace = "default"
	}
	s.versions[l.ResourceVersion] = holder
	op := &model.Op{Owner: c.Identity, OK: true}
	switch {
	case holder == "":
		// A release, recorded as applied even by one who did not hold the
		// lease (only a stale update can do that): the checker judges it.
		op.Kind = model.Release
		s.holder = ""
	case holder == s.holder && now < s.expiry:
		op.Kind, op.TTL = model.Renew, ttl(l)
		s.expiry = now + op.TTL
	default:
		op.Kind, op.TTL, op.Owner = model.Acquire, ttl(l), holder
		if s.Fenced {
			op.Fence = s.rv
		}
		s.holder, s.expiry = holder, now+op.TTL
	}
	return object(code, l), op, detail
}

// refused records a refused compare-and-swap where the lease's state
// explains the refusal, and nothing where only the client's copy was stale.
func (s *Server) refused(now int64, c *vclient.Candidate, l *coordinationv1.Lease, read, holder string) *model.Op {
	if holder != c.Identity {
		return nil // a release, or an update on another's behalf
	}
	if s.versions[read] == c.Identity { // it was renewing its own lease
		if s.holder != c.Identity {
			return &model.Op{Kind: model.Renew, Owner: c.Identity, TTL: ttl(l), Error: "not-holder"}
		}
		return nil
	}
	if s.heldLive(now, c.Identity) {
		return &model.Op{Kind: model.Acquire, Owner: c.Identity, TTL: ttl(l), Error: "held"}
	}
	return nil
}

// heldLive reports whether someone other than id holds the lease live at now.
func (s *Server) heldLive(now int64, id string) bool {
	return s.holder != "" && s.holder != id && now < s.expiry
}

func validate(l *coordinationv1.Lease) error {
	if d := l.Spec.LeaseDurationSeconds; d != nil && *d <= 0 {
		return apierrors.NewInvalid(schema.GroupKind{Group: "coordination.k8s.io", Kind: "Lease"}, l.Name, nil)
	}
	return nil
}

func ttl(l *coordinationv1.Lease) int64 {
	if d := l.Spec.LeaseDurationSeconds; d != nil && *d > 0 {
		return int64(*d) * 1000
	}
	return 1
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func object(code int, l *coordinationv1.Lease) *http.Response {
	b, err := json.Marshal(l)
	if err != nil {
		panic(err) // a Lease always marshals
	}
	return vclient.Response(code, b)
}

func status(err error) *http.Response {
	st := err.(apierrors.APIStatus).Status()
	st.Kind, st.APIVersion = "Status", "v1"
	if st.Code == 0 {
		st.Code = http.StatusInternalServerError
	}
	b, _ := json.Marshal(&st)
	return vclient.Response(int(st.Code), b)
}
