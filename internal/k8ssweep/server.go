package k8ssweep

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/vclient"
)

// Server is an in-process Kubernetes API server, as client-go reaches it
// over HTTP, for the resources a controller and its leader election use:
// coordination.k8s.io/v1 Leases, coordination.k8s.io/v1beta1
// LeaseCandidates and core/v1 ConfigMaps (get, list, watch, create,
// update, patch, delete) — with the coordinating controller of
// coordinated leader election over every Lease a LeaseCandidate names
// (coordinated.go) — and Events (core/v1 and
// events.k8s.io/v1: accepted and kept, so a recorder's POSTs succeed). It
// speaks what a real API server speaks: request and answer bodies in
// protobuf (application/vnd.kubernetes.protobuf, what a clientset made by
// kubernetes.NewForConfig sends by default) or JSON, as the Content-Type
// and Accept headers say, errors as metav1.Status, watches as the framed
// event stream client-go decodes; JSON merge, strategic-merge and JSON
// patches. It behaves as the real one does where it matters to leader
// election and to a controller fencing its own writes:
//
//   - every write bumps metadata.resourceVersion (one counter for all
//     objects, as etcd's revision), and an update, a patch or a delete
//     whose resourceVersion precondition is not the object's current one
//     is refused with 409 Conflict (optimistic concurrency: etcd's
//     compare-and-swap under the API server). client-go's fake clientset
//     does not enforce this; a store built on it would manufacture double
//     leaders (AcceptStale plants exactly that bug, on Leases);
//   - a create of an object that exists is refused with 409 AlreadyExists,
//     a get, update, patch or delete of one that does not with 404;
//   - a Lease spec with leaseDurationSeconds <= 0 is refused with 422
//     Invalid (the API server's validation): client-go truncates
//     LeaseDuration to whole seconds, so a sub-second LeaseDuration cannot
//     take a lease.
//
// It records what each request did to the election's Lease (the first
// Lease created, unless LeaseName names it) in the history's terms: an
// update or create that makes an identity the holder is an acquire (fence:
// the resourceVersion it wrote, when fenced), one by the holder whose lease
// is still live is a renew, one that clears the holder (or deletes the
// Lease) is a release. The API server never expires a lease — its expiry is
// the candidates' rule, LeaseDuration after they last saw it change — so an
// update by the holder after its lease's duration ran out is recorded as
// the acquire it is in the article's terms (the same owner may take an
// expired lease again). A refused compare-and-swap is recorded only where
// the lease's state explains the refusal (a renew by one who is no longer
// the holder, an acquire of a lease another holds live); one refused only
// because the client's copy was stale, while the lease is its own or free,
// did nothing to the lease and is left to the trace. What it does to other
// objects goes to the trace.
//
// A watch's events reach the client as the change is applied, not through
// the harness's network: they are not delayed, and a paused candidate's
// informer reads them (its requests and answers are still held).
type Server struct {
	// AcceptStale is the planted bug: Lease updates are applied whatever
	// resourceVersion they carry, as client-go's fake clientset does.
	AcceptStale bool
	// Fenced numbers grants by resourceVersion in the history.
	Fenced bool
	// JSONOnly plants the limitation of a server that speaks JSON only: a
	// protobuf body is refused with 415, and answers are JSON whatever the
	// client prefers (what the first in-process server did; a default
	// clientset's every write then fails).
	JSONOnly bool
	// StampExpiry makes the coordinating controller judge a Lease run out
	// by the renewTime its holder stamped, as Kubernetes' controller's
	// isLeaseExpired reads it, rather than by when the server observed
	// that renewTime change: a renewal stamped before a pause and applied
	// after it is then run out as soon as it lands (coordinated.go).
	StampExpiry bool
	// LeaseName is the namespace/name of the election's Lease ("": the
	// first Lease created).
	LeaseName string
	// Leases, when set, are the namespace/name of every Lease a candidate
	// may hold (shards, one per controller): each is judged apart, its ops
	// on its own key (its namespace/name), and LeaseName is ignored.
	Leases []string

	rv      int64
	objects map[objKey]runtime.Object
	log     []change // every change, for watches from a resourceVersion
	mu      sync.Mutex
	watches []*watcher

	// judged is each judged Lease in the article's terms, for classifying.
	judged map[string]*leaseState
	// elections is the coordinating controller's state of each Lease some
	// LeaseCandidate names (coordinated.go).
	elections map[string]*election
}

// leaseState is a judged Lease as the history sees it: its holder and
// when its lease runs out, and the holder each resourceVersion recorded.
type leaseState struct {
	key      string // the history's key: "" for the run's one Lease
	holder   string
	expiry   int64
	versions map[string]string
}

// NewServer returns an empty store.
func NewServer() *Server {
	return &Server{objects: map[objKey]runtime.Object{}, judged: map[string]*leaseState{}, elections: map[string]*election{}}
}

// resource is one kind of object the server keeps.
type resource struct {
	gv       schema.GroupVersion
	name     string // the URL's plural
	kind     string
	newObj   func() runtime.Object
	newList  func(items []runtime.Object) runtime.Object
	validate func(runtime.Object) error
}

func (r *resource) gr() schema.GroupResource {
	return schema.GroupResource{Group: r.gv.Group, Resource: r.name}
}

// statusGV is the version Status answers are in, "v1", as the API server
// writes them.
var statusGV = schema.GroupVersion{Version: "v1"}

var (
	resources = []*resource{
		{gv: coordinationv1.SchemeGroupVersion, name: "leases", kind: "Lease",
			newObj: func() runtime.Object { return &coordinationv1.Lease{} },
			newList: func(items []runtime.Object) runtime.Object {
				l := &coordinationv1.LeaseList{Items: []coordinationv1.Lease{}}
				for _, o := range items {
					l.Items = append(l.Items, *o.(*coordinationv1.Lease))
				}
				return l
			},
			validate: func(o runtime.Object) error { return validate(o.(*coordinationv1.Lease)) }},
		{gv: corev1.SchemeGroupVersion, name: "configmaps", kind: "ConfigMap",
			newObj: func() runtime.Object { return &corev1.ConfigMap{} },
			newList: func(items []runtime.Object) runtime.Object {
				l := &corev1.ConfigMapList{Items: []corev1.ConfigMap{}}
				for _, o := range items {
					l.Items = append(l.Items, *o.(*corev1.ConfigMap))
				}
				return l
			}},
		{gv: corev1.SchemeGroupVersion, name: "events", kind: "Event",
			newObj: func() runtime.Object { return &corev1.Event{} },
			newList: func(items []runtime.Object) runtime.Object {
				l := &corev1.EventList{Items: []corev1.Event{}}
				for _, o := range items {
					l.Items = append(l.Items, *o.(*corev1.Event))
				}
				return l
			}},
		{gv: eventsv1.SchemeGroupVersion, name: "events", kind: "Event",
			newObj: func() runtime.Object { return &eventsv1.Event{} },
			newList: func(items []runtime.Object) runtime.Object {
				l := &eventsv1.EventList{Items: []eventsv1.Event{}}
				for _, o := range items {
					l.Items = append(l.Items, *o.(*eventsv1.Event))
				}
				return l
			}},
	}
)

type objKey struct {
	res             *resource
	namespace, name string
}

// change is one applied change, for watches.
type change struct {
	rv  int64
	typ watch.EventType
	key objKey
	obj runtime.Object
}

// route parses /api/v1/namespaces/NS/R[/NAME] and
// /apis/G/V/namespaces/NS/R[/NAME].
func route(path string) (res *resource, ns, name string, ok bool) {
	var gv schema.GroupVersion
	var rest string
	switch {
	case strings.HasPrefix(path, "/api/v1/namespaces/"):
		gv, rest = corev1.SchemeGroupVersion, strings.TrimPrefix(path, "/api/v1/namespaces/")
	case strings.HasPrefix(path, "/apis/"):
		p := strings.SplitN(strings.TrimPrefix(path, "/apis/"), "/", 4)
		if len(p) < 4 || p[2] != "namespaces" {
			return nil, "", "", false
		}
		gv, rest = schema.GroupVersion{Group: p[0], Version: p[1]}, p[3]
	default:
		return nil, "", "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" {
		return nil, "", "", false
	}
	for _, r := range resources {
		if r.gv == gv && r.name == parts[1] {
			res = r
		}
	}
	if res == nil {
		return nil, "", "", false
	}
	if len(parts) == 3 {
		name = parts[2]
	}
	return res, parts[0], name, true
}

// Serve implements vclient.Server. Before it serves req, the coordinating
// controller takes its step (coordinated.go); what it did follows what
// the request did in the trace.
func (s *Server) Serve(now int64, c *vclient.Candidate, req *http.Request, body []byte) (*http.Response, *model.Op, string) {
	did := s.coordinate(now, c.TTL)
	resp, op, detail := s.serve(now, c, req, body)
	switch {
	case did == "":
	case detail == "":
		detail = did
	default:
		detail += "; " + did
	}
	return resp, op, detail
}

func (s *Server) serve(now int64, c *vclient.Candidate, req *http.Request, body []byte) (*http.Response, *model.Op, string) {
	res, ns, name, ok := route(req.URL.Path)
	if !ok {
		// Named as what it is, so that a sweep whose client needs a
		// resource the server lacks says so rather than blaming the
		// NotFound a lease protocol expects.
		return s.status(req, apierrors.NewNotFound(schema.GroupResource{}, req.URL.Path)), nil,
			vclient.Unserved + "404, the API server does not serve this resource"
	}
	q := req.URL.Query()
	switch {
	case req.Method == http.MethodGet && name != "":
		o, ok := s.objects[objKey{res, ns, name}]
		if !ok {
			return s.status(req, apierrors.NewNotFound(res.gr(), name)), nil, ""
		}
		return s.object(req, http.StatusOK, res, o), nil, ""
	case req.Method == http.MethodGet && (q.Get("watch") == "true" || q.Get("watch") == "1"):
		return s.watch(req, res, ns, q)
	case req.Method == http.MethodGet:
		return s.list(req, res, ns, q)
	case req.Method == http.MethodPost && name == "":
		return s.create(now, c, req, res, ns, body)
	case req.Method == http.MethodPut && name != "":
		o := res.newObj()
		if err := s.decode(req, body, o); err != nil {
			return s.status(req, err), nil, fmt.Sprintf("%d update: %v", code(err), err)
		}
		return s.update(now, c, req, res, objKey{res, ns, name}, o)
	case req.Method == http.MethodPatch && name != "":
		return s.patch(now, c, req, res, objKey{res, ns, name}, body)
	case req.Method == http.MethodDelete && name != "":
		return s.delete(now, c, req, objKey{res, ns, name}, body)
	}
	return s.status(req, apierrors.NewMethodNotSupported(res.gr(), req.Method)), nil, "405 " + req.Method
}

func code(err error) int32 {
	if st, ok := err.(apierrors.APIStatus); ok {
		return st.Status().Code
	}
	return http.StatusInternalServerError
}

// lease returns the state of k when it is a judged Lease (nil when not):
// one of Leases, or else the election's Lease, claiming the first Lease
// created when LeaseName names none.
func (s *Server) lease(k objKey, creating bool) *leaseState {
	if k.res.name != "leases" || k.res.gv != coordinationv1.SchemeGroupVersion {
		return nil
	}
	name := k.namespace + "/" + k.name
	key := ""
	if len(s.Leases) > 0 {
		if !slices.Contains(s.Leases, name) {
			return nil
		}
		key = name
	} else {
		if s.LeaseName == "" && creating {
			s.LeaseName = name
		}
		if s.LeaseName != name {
			return nil
		}
	}
	ls := s.judged[name]
	if ls == nil {
		ls = &leaseState{key: key, versions: map[string]string{}}
		s.judged[name] = ls
	}
	return ls
}

// keyed puts op, when there is one, on ls's key.
func keyed(op *model.Op, ls *leaseState) *model.Op {
	if op != nil {
		op.Key = ls.key
	}
	return op
}

func (s *Server) create(now int64, c *vclient.Candidate, req *http.Request, res *resource, ns string, body []byte) (*http.Response, *model.Op, string) {
	o := res.newObj()
	if err := s.decode(req, body, o); err != nil {
		return s.status(req, err), nil, fmt.Sprintf("%d create: %v", code(err), err)
	}
	m, _ := meta.Accessor(o)
	if m.GetNamespace() == "" {
		m.SetNamespace(ns)
	}
	if m.GetName() == "" && m.GetGenerateName() != "" {
		m.SetName(fmt.Sprintf("%s%d", m.GetGenerateName(), s.rv+1))
	}
	if m.GetNamespace() != ns || m.GetName() == "" {
		err := apierrors.NewBadRequest("the namespace of the object does not match the namespace on the request, or it has no name")
		return s.status(req, err), nil, "400 create: " + err.Error()
	}
	if res.validate != nil {
		if err := res.validate(o); err != nil {
			return s.status(req, err), nil, "422 create: " + err.Error()
		}
	}
	k := objKey{res, ns, m.GetName()}
	if _, exists := s.objects[k]; exists {
		var op *model.Op
		if ls := s.lease(k, false); ls != nil && ls.heldLive(now, c.Identity) {
			l := o.(*coordinationv1.Lease)
			op = keyed(&model.Op{Kind: model.Acquire, Owner: c.Identity, TTL: c.LeaseTTL(ttl(l)), Error: "held"}, ls)
		}
		return s.status(req, apierrors.NewAlreadyExists(res.gr(), k.name)), op, "409 create: " + k.name + " exists"
	}
	m.SetUID(types.UID(fmt.Sprintf("uid-%d", s.rv+1)))
	m.SetCreationTimestamp(metav1.Unix(now/1000, (now%1000)*1e6))
	return s.store(now, c, req, k, o, http.StatusCreated, watch.Added, "")
}

// update replaces the object at k by o, if o's resourceVersion (when it
// has one) is the current one.
func (s *Server) update(now int64, c *vclient.Candidate, req *http.Request, res *resource, k objKey, o runtime.Object) (*http.Response, *model.Op, string) {
	cur, ok := s.objects[k]
	m, _ := meta.Accessor(o)
	if !ok || m.GetName() != k.name && m.GetName() != "" {
		return s.status(req, apierrors.NewNotFound(res.gr(), k.name)), nil, "404 update " + k.name
	}
	if res.validate != nil {
		if err := res.validate(o); err != nil {
			return s.status(req, err), nil, "422 update: " + err.Error()
		}
	}
	cm, _ := meta.Accessor(cur)
	ls := s.lease(k, false)
	read := m.GetResourceVersion()
	detail := ""
	if read != "" && read != cm.GetResourceVersion() {
		if !(ls != nil && s.AcceptStale) {
			err := apierrors.NewConflict(res.gr(), k.name, fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
			var op *model.Op
			if ls != nil {
				l := o.(*coordinationv1.Lease)
				op = keyed(ls.refused(now, c, l, read, deref(l.Spec.HolderIdentity)), ls)
			}
			return s.status(req, err), op, fmt.Sprintf("409 update %s: resourceVersion %s, current %s", k.name, read, cm.GetResourceVersion())
		}
		detail = fmt.Sprintf("stale update accepted (resourceVersion %s, current %s): the planted bug", read, cm.GetResourceVersion())
	}
	// What the API server keeps of the object: its identity and metadata
	// are the stored ones; the rest, and the labels and annotations, are
	// the client's.
	m.SetName(k.name)
	m.SetNamespace(k.namespace)
	m.SetUID(cm.GetUID())
	m.SetCreationTimestamp(cm.GetCreationTimestamp())
	return s.store(now, c, req, k, o, http.StatusOK, watch.Modified, detail)
}

// store keeps o at k with a new resourceVersion, tells the watches, and
// says what it did to the election's Lease.
func (s *Server) store(now int64, c *vclient.Candidate, req *http.Request, k objKey, o runtime.Object, code int, typ watch.EventType, detail string) (*http.Response, *model.Op, string) {
	s.rv++
	m, _ := meta.Accessor(o)
	m.SetResourceVersion(strconv.FormatInt(s.rv, 10))
	o.GetObjectKind().SetGroupVersionKind(k.res.gv.WithKind(k.res.kind))
	s.objects[k] = o
	s.notify(change{rv: s.rv, typ: typ, key: k, obj: o})
	if l, ok := o.(*coordinationv1.Lease); ok {
		s.observe(now, k, l) // the coordinating controller's clock of the Lease
	}
	ls := s.lease(k, typ == watch.Added)
	if ls == nil {
		if detail == "" {
			detail = fmt.Sprintf("%s %s %s/%s at resourceVersion %d", strings.ToLower(string(typ)), k.res.kind, k.namespace, k.name, s.rv)
			// An Event says what the client told the cluster (an elector's
			// "became leader"): the trace keeps its reason and words.
			switch e := o.(type) {
			case *corev1.Event:
				detail += fmt.Sprintf(": event %s %q", e.Reason, e.Message)
			case *eventsv1.Event:
				detail += fmt.Sprintf(": event %s %q", e.Reason, e.Note)
			}
		}
		return s.object(req, code, k.res, o), nil, detail
	}
	l := o.(*coordinationv1.Lease)
	holder := deref(l.Spec.HolderIdentity)
	ls.versions[l.ResourceVersion] = holder
	op := &model.Op{Owner: c.Identity, OK: true, Key: ls.key}
	switch {
	case holder == "":
		// A release, recorded as applied even by one who did not hold the
		// lease (only a stale update can do that): the checker judges it.
		op.Kind = model.Release
		ls.holder = ""
	case holder == ls.holder && now < ls.expiry:
		op.Kind, op.TTL = model.Renew, c.LeaseTTL(ttl(l))
		ls.expiry = now + op.TTL
	default:
		op.Kind, op.TTL, op.Owner = model.Acquire, c.LeaseTTL(ttl(l)), holder
		if s.Fenced {
			op.Fence = s.rv
		}
		ls.holder, ls.expiry = holder, now+op.TTL
	}
	return s.object(req, code, k.res, o), op, detail
}

// patch applies a JSON merge, strategic-merge or JSON patch to the object
// at k, and stores the result as an update would: a resourceVersion the
// patch sets is its precondition.
func (s *Server) patch(now int64, c *vclient.Candidate, req *http.Request, res *resource, k objKey, body []byte) (*http.Response, *model.Op, string) {
	cur, ok := s.objects[k]
	if !ok {
		return s.status(req, apierrors.NewNotFound(res.gr(), k.name)), nil, "404 patch " + k.name
	}
	old, err := json.Marshal(cur)
	if err != nil {
		return s.status(req, apierrors.NewInternalError(err)), nil, "500 patch: " + err.Error()
	}
	mt, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	var patched []byte
	switch types.PatchType(mt) {
	case types.MergePatchType:
		patched, err = jsonpatch.MergePatch(old, body)
	case types.StrategicMergePatchType:
		patched, err = strategicpatch.StrategicMergePatch(old, body, res.newObj())
	case types.JSONPatchType:
		var p jsonpatch.Patch
		if p, err = jsonpatch.DecodePatch(body); err == nil {
			patched, err = p.Apply(old)
		}
	default:
		err := unsupported(mt, "application/merge-patch+json, application/strategic-merge-patch+json, application/json-patch+json")
		return s.status(req, err), nil, "415 patch: " + err.Error()
	}
	if err != nil {
		return s.status(req, apierrors.NewBadRequest(err.Error())), nil, "400 patch: " + err.Error()
	}
	o := res.newObj()
	if err := json.Unmarshal(patched, o); err != nil {
		return s.status(req, apierrors.NewBadRequest(err.Error())), nil, "400 patch: " + err.Error()
	}
	// The resourceVersion is a precondition only where the patch set it.
	m, _ := meta.Accessor(o)
	var stated struct {
		Metadata struct {
			ResourceVersion *string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if json.Unmarshal(body, &stated) != nil || stated.Metadata.ResourceVersion == nil {
		m.SetResourceVersion("")
	}
	return s.update(now, c, req, res, k, o)
}

// delete removes the object at k, if the preconditions the DeleteOptions
// state hold.
func (s *Server) delete(now int64, c *vclient.Candidate, req *http.Request, k objKey, body []byte) (*http.Response, *model.Op, string) {
	cur, ok := s.objects[k]
	if !ok {
		return s.status(req, apierrors.NewNotFound(k.res.gr(), k.name)), nil, "404 delete " + k.name
	}
	var opts metav1.DeleteOptions
	if len(body) > 0 {
		if err := s.decode(req, body, &opts); err != nil {
			return s.status(req, err), nil, fmt.Sprintf("%d delete: %v", code(err), err)
		}
	}
	cm, _ := meta.Accessor(cur)
	if p := opts.Preconditions; p != nil {
		if p.ResourceVersion != nil && *p.ResourceVersion != cm.GetResourceVersion() || p.UID != nil && *p.UID != cm.GetUID() {
			err := apierrors.NewConflict(k.res.gr(), k.name, fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
			return s.status(req, err), nil, fmt.Sprintf("409 delete %s: precondition failed (current resourceVersion %s)", k.name, cm.GetResourceVersion())
		}
	}
	s.rv++
	delete(s.objects, k)
	s.notify(change{rv: s.rv, typ: watch.Deleted, key: k, obj: cur})
	st := &metav1.Status{Status: metav1.StatusSuccess, Code: http.StatusOK,
		Details: &metav1.StatusDetails{Name: k.name, Group: k.res.gv.Group, Kind: k.res.name, UID: cm.GetUID()}}
	ls := s.lease(k, false)
	if ls == nil {
		return s.encode(req, http.StatusOK, statusGV, st), nil, fmt.Sprintf("deleted %s %s/%s", k.res.kind, k.namespace, k.name)
	}
	// Deleting the election's Lease frees it: a release, judged as one.
	ls.holder = ""
	return s.encode(req, http.StatusOK, statusGV, st), &model.Op{Kind: model.Release, Owner: c.Identity, OK: true, Key: ls.key},
		"deleted the election's Lease " + k.name
}

// matching lists the objects of res in ns that q's selectors select, by name.
func (s *Server) matching(res *resource, ns string, q url.Values) ([]objKey, func(objKey, runtime.Object) bool, error) {
	ls, err := labels.Parse(q.Get("labelSelector"))
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	fs, err := fields.ParseSelector(q.Get("fieldSelector"))
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	for _, r := range fs.Requirements() {
		if r.Field != "metadata.name" && r.Field != "metadata.namespace" {
			return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", r.Field))
		}
	}
	sel := func(k objKey, o runtime.Object) bool {
		m, _ := meta.Accessor(o)
		return k.res == res && k.namespace == ns && ls.Matches(labels.Set(m.GetLabels())) &&
			fs.Matches(fields.Set{"metadata.name": k.name, "metadata.namespace": k.namespace})
	}
	var keys []objKey
	for k, o := range s.objects {
		if sel(k, o) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b objKey) int { return strings.Compare(a.name, b.name) })
	return keys, sel, nil
}

func (s *Server) list(req *http.Request, res *resource, ns string, q url.Values) (*http.Response, *model.Op, string) {
	keys, _, err := s.matching(res, ns, q)
	if err != nil {
		return s.status(req, err), nil, "400 list: " + err.Error()
	}
	items := make([]runtime.Object, len(keys))
	for i, k := range keys {
		items[i] = s.objects[k]
	}
	l := res.newList(items)
	lm, _ := meta.ListAccessor(l)
	lm.SetResourceVersion(strconv.FormatInt(s.rv, 10))
	return s.object(req, http.StatusOK, res, l), nil, ""
}

// watch answers a watch: the changes after the resourceVersion asked (or,
// from none or "0", every object there is, as ADDED), then every change as
// it is applied, until the client's request ends.
func (s *Server) watch(req *http.Request, res *resource, ns string, q url.Values) (*http.Response, *model.Op, string) {
	keys, sel, err := s.matching(res, ns, q)
	if err != nil {
		return s.status(req, err), nil, "400 watch: " + err.Error()
	}
	proto := s.proto(req)
	w := &watcher{s: s, res: res, sel: sel, proto: proto, done: req.Context().Done(), wake: make(chan struct{}, 1)}
	from := q.Get("resourceVersion")
	switch {
	case q.Get("sendInitialEvents") == "true":
		// A watch-list (client-go's informers, by default): every object
		// there is now, as ADDED, then the bookmark that ends the initial
		// events, at the current resourceVersion.
		for _, k := range keys {
			w.send(change{rv: s.rv, typ: watch.Added, key: k, obj: s.objects[k]})
		}
		mark := res.newObj()
		m, _ := meta.Accessor(mark)
		m.SetResourceVersion(strconv.FormatInt(s.rv, 10))
		m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
		mark.GetObjectKind().SetGroupVersionKind(res.gv.WithKind(res.kind))
		w.sendAlways(change{rv: s.rv, typ: watch.Bookmark, key: objKey{res: res, namespace: ns}, obj: mark})
	case from == "" || from == "0":
		for _, k := range keys {
			w.send(change{rv: s.rv, typ: watch.Added, key: k, obj: s.objects[k]})
		}
	default:
		rv, err := strconv.ParseInt(from, 10, 64)
		if err != nil {
			return s.status(req, apierrors.NewBadRequest("resourceVersion: "+err.Error())), nil, "400 watch"
		}
		for _, ch := range s.log {
			if ch.rv > rv {
				w.send(ch)
			}
		}
	}
	s.mu.Lock()
	s.watches = append(s.watches, w)
	s.mu.Unlock()
	ct := "application/json"
	if proto {
		ct = runtime.ContentTypeProtobuf + ";stream=watch"
	}
	resp := vclient.Response(http.StatusOK, nil)
	resp.Header.Set("Content-Type", ct)
	resp.Header.Set("Transfer-Encoding", "chunked")
	resp.ContentLength = -1
	resp.Body = w
	return resp, nil, fmt.Sprintf("watch %s in %s from resourceVersion %q", res.name, ns, from)
}

// notify records ch and sends it to the watches it concerns.
func (s *Server) notify(ch change) {
	s.log = append(s.log, ch)
	s.mu.Lock()
	ws := slices.Clone(s.watches)
	s.mu.Unlock()
	for _, w := range ws {
		w.send(ch)
	}
}

// watcher is one watch's event stream: the answer's body.
type watcher struct {
	s     *Server
	res   *resource
	sel   func(objKey, runtime.Object) bool
	proto bool
	done  <-chan struct{}
	wake  chan struct{}

	mu     sync.Mutex
	buf    []byte
	closed bool
}

// send frames ch, when it concerns the watch, as client-go decodes a watch:
// a JSON WatchEvent a line, or length-prefixed protobuf WatchEvents.
func (w *watcher) send(ch change) {
	if !w.sel(ch.key, ch.obj) {
		return
	}
	w.sendAlways(ch)
}

// sendAlways frames ch whatever the watch's selectors (a bookmark).
func (w *watcher) sendAlways(ch change) {
	raw, err := encodeObject(w.proto, ch.key.res.gv, ch.obj)
	if err != nil {
		return
	}
	ev := metav1.WatchEvent{Type: string(ch.typ), Object: runtime.RawExtension{Raw: raw}}
	var frame []byte
	if w.proto {
		b, err := ev.Marshal()
		if err != nil {
			return
		}
		frame = binary.BigEndian.AppendUint32(nil, uint32(len(b)))
		frame = append(frame, b...)
	} else {
		b, err := json.Marshal(&ev)
		if err != nil {
			return
		}
		frame = append(b, '\n')
	}
	w.mu.Lock()
	w.buf = append(w.buf, frame...)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *watcher) Read(p []byte) (int, error) {
	for {
		w.mu.Lock()
		if w.closed {
			w.mu.Unlock()
			return 0, io.EOF
		}
		if len(w.buf) > 0 {
			n := copy(p, w.buf)
			w.buf = w.buf[n:]
			w.mu.Unlock()
			return n, nil
		}
		w.mu.Unlock()
		select {
		case <-w.wake:
		case <-w.done:
			w.Close()
			return 0, io.EOF
		}
	}
}

// Close ends the stream (client-go closes it to stop a watch): a Read
// waiting for an event returns.
func (w *watcher) Close() error {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	w.s.mu.Lock()
	w.s.watches = slices.DeleteFunc(w.s.watches, func(x *watcher) bool { return x == w })
	w.s.mu.Unlock()
	return nil
}

// refused records a refused compare-and-swap on the election's Lease where
// the lease's state explains the refusal, and nothing where only the
// client's copy was stale.
func (ls *leaseState) refused(now int64, c *vclient.Candidate, l *coordinationv1.Lease, read, holder string) *model.Op {
	if holder != c.Identity {
		return nil // a release, or an update on another's behalf
	}
	if ls.versions[read] == c.Identity { // it was renewing its own lease
		if ls.holder != c.Identity {
			return &model.Op{Kind: model.Renew, Owner: c.Identity, TTL: c.LeaseTTL(ttl(l)), Error: "not-holder"}
		}
		return nil
	}
	if ls.heldLive(now, c.Identity) {
		return &model.Op{Kind: model.Acquire, Owner: c.Identity, TTL: c.LeaseTTL(ttl(l)), Error: "held"}
	}
	return nil
}

// heldLive reports whether someone other than id holds the lease live at now.
func (ls *leaseState) heldLive(now int64, id string) bool {
	return ls.holder != "" && ls.holder != id && now < ls.expiry
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

// The serializers of client-go's scheme, the ones a clientset uses.
var (
	protoInfo, _ = runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	jsonInfo, _  = runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
)

func unsupported(mt, accepted string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType,
		Reason:  metav1.StatusReasonUnsupportedMediaType,
		Message: fmt.Sprintf("the body of the request was in an unknown format (Content-Type %q) - accepted media types include: %s", mt, accepted)}}
}

// decode reads a request's body into o in the media type its Content-Type
// names: JSON or (unless JSONOnly) protobuf; another is refused with 415.
func (s *Server) decode(req *http.Request, body []byte, o runtime.Object) error {
	mt, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	switch {
	case mt == runtime.ContentTypeJSON || mt == "":
		if err := json.Unmarshal(body, o); err != nil {
			return apierrors.NewBadRequest(err.Error())
		}
		return nil
	case mt == runtime.ContentTypeProtobuf && !s.JSONOnly:
		got, _, err := protoInfo.Serializer.Decode(body, nil, o)
		if err != nil {
			return apierrors.NewBadRequest(err.Error())
		}
		if got != o {
			return apierrors.NewBadRequest(fmt.Sprintf("the body is a %T, not a %T", got, o))
		}
		return nil
	}
	accepted := runtime.ContentTypeJSON
	if !s.JSONOnly {
		accepted += ", " + runtime.ContentTypeProtobuf
	}
	return unsupported(mt, accepted)
}

// proto reports whether the answer to req is protobuf: the first media
// type of its Accept header the server speaks decides, as the API server's
// negotiation does (JSON when it names neither).
func (s *Server) proto(req *http.Request) bool {
	if s.JSONOnly {
		return false
	}
	for _, a := range strings.Split(req.Header.Get("Accept"), ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(a))
		if err != nil {
			continue
		}
		switch mt {
		case runtime.ContentTypeProtobuf:
			return true
		case runtime.ContentTypeJSON, "*/*", "application/*":
			return false
		}
	}
	return false
}

func encodeObject(proto bool, gv schema.GroupVersion, o runtime.Object) ([]byte, error) {
	ser := jsonInfo.Serializer
	if proto {
		ser = protoInfo.Serializer
	}
	return runtime.Encode(scheme.Codecs.EncoderForVersion(ser, gv), o)
}

// encode answers req with o, as its Accept header asks.
func (s *Server) encode(req *http.Request, code int, gv schema.GroupVersion, o runtime.Object) *http.Response {
	proto := s.proto(req)
	b, err := encodeObject(proto, gv, o)
	if err != nil {
		panic(fmt.Sprintf("k8ssweep: encoding a %T: %v", o, err)) // every object the server keeps encodes
	}
	resp := vclient.Response(code, b)
	if proto {
		resp.Header.Set("Content-Type", runtime.ContentTypeProtobuf)
	}
	return resp
}

func (s *Server) object(req *http.Request, code int, res *resource, o runtime.Object) *http.Response {
	return s.encode(req, code, res.gv, o)
}

// status answers req with err as a metav1.Status.
func (s *Server) status(req *http.Request, err error) *http.Response {
	st := err.(apierrors.APIStatus).Status()
	if st.Code == 0 {
		st.Code = http.StatusInternalServerError
	}
	return s.encode(req, int(st.Code), statusGV, &st)
}
