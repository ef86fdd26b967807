package k8ssweep

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/vclient"
)

// Holders is api seen through the identities a candidate's client writes:
// the holder string a candidate puts in a Lease — controller-runtime's
// hostname_uuid, a pod name, whatever the user's elector was given — is
// that candidate's. At the API server's door the holder a candidate writes
// is replaced by its identity (Candidate.Identity), so the API server
// classifies acquires and renewals by candidate and the history speaks of
// candidates ("h1"), never of a host; in every Lease answered the holder
// is shown again as the string its candidate wrote, so each client sees
// exactly the Lease it would. Each Lease (namespace and name) shows the
// string of the last write applied to it. Bodies in JSON or protobuf are
// read and written with client-go's own codecs; a list or a watch of
// Leases is answered as the API server gives it (a client that lists its
// Leases sees candidates' identities there).
func Holders(api vclient.Server) vclient.Server {
	return &holders{api: api, owners: map[string]string{}, shown: map[string]string{}}
}

type holders struct {
	api vclient.Server
	// owners maps each holder string a candidate wrote to its identity.
	owners map[string]string
	// shown is, per Lease path, the holder string of the last write the
	// API server applied to it: what the stored Lease's holder stands for.
	shown map[string]string
}

const leasesPrefix = "/apis/coordination.k8s.io/v1/namespaces/"

// leaseKey is the namespace/name of the one Lease req is about ("" for a
// collection, or anything but Leases).
func leaseKey(req *http.Request, body []byte) string {
	rest, ok := strings.CutPrefix(req.URL.Path, leasesPrefix)
	if !ok {
		return ""
	}
	ns, name, ok := strings.Cut(rest, "/leases")
	if !ok {
		return ""
	}
	name = strings.TrimPrefix(name, "/")
	if name == "" && req.Method == http.MethodPost {
		if l, _, ok := decodeLease(body, req.Header.Get("Content-Type")); ok {
			name = l.Name
		}
	}
	if name == "" || strings.Contains(name, "/") {
		return ""
	}
	return ns + "/" + name
}

// Serve implements vclient.Server.
func (s *holders) Serve(now int64, c *vclient.Candidate, req *http.Request, body []byte) (*http.Response, *model.Op, string) {
	key := leaseKey(req, body)
	if key == "" {
		return s.api.Serve(now, c, req, body)
	}
	write := req.Method == http.MethodPost || req.Method == http.MethodPut
	wrote, note := "", ""
	if write {
		if l, mt, ok := decodeLease(body, req.Header.Get("Content-Type")); ok && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" {
			wrote = *l.Spec.HolderIdentity
			if o, ok := s.owners[wrote]; ok && o != c.Identity {
				note = fmt.Sprintf("; the holder string it wrote was %s's too", o)
			}
			s.owners[wrote] = c.Identity
			id := c.Identity
			l.Spec.HolderIdentity = &id
			if b, ok := encodeLease(l, mt); ok {
				body = b
			}
		}
	}
	resp, op, detail := s.api.Serve(now, c, req, body)
	ok := resp.StatusCode/100 == 2
	if write && ok {
		s.shown[key] = wrote
	}
	if shown := s.shown[key]; ok && shown != "" {
		resp = s.translate(resp, shown)
	}
	return resp, op, detail + note
}

// translate shows the holder string shown stands for in a Lease answered.
func (s *holders) translate(resp *http.Response, shown string) *http.Response {
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return vclient.Response(http.StatusInternalServerError, nil)
	}
	out := &http.Response{StatusCode: resp.StatusCode, Status: resp.Status, Proto: resp.Proto, ProtoMajor: resp.ProtoMajor, ProtoMinor: resp.ProtoMinor,
		Header: resp.Header.Clone(), Body: io.NopCloser(bytes.NewReader(b)), ContentLength: int64(len(b))}
	l, mt, ok := decodeLease(b, resp.Header.Get("Content-Type"))
	if !ok || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != s.owners[shown] {
		return out
	}
	l.Spec.HolderIdentity = &shown
	if nb, ok := encodeLease(l, mt); ok {
		out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(nb)), int64(len(nb))
	}
	return out
}

// decodeLease reads a Lease in the media type contentType names (JSON
// when it names none), with client-go's codecs.
func decodeLease(b []byte, contentType string) (*coordinationv1.Lease, string, bool) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil || mt == "" {
		mt = runtime.ContentTypeJSON
	}
	if mt != runtime.ContentTypeJSON && mt != runtime.ContentTypeProtobuf {
		return nil, "", false
	}
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(b, nil, nil)
	l, ok := obj.(*coordinationv1.Lease)
	return l, mt, err == nil && ok
}

// encodeLease writes l in media type mt, as the API server writes it.
func encodeLease(l *coordinationv1.Lease, mt string) ([]byte, bool) {
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), mt)
	if !ok {
		return nil, false
	}
	var b bytes.Buffer
	if err := scheme.Codecs.EncoderForVersion(info.Serializer, coordinationv1.SchemeGroupVersion).Encode(l, &b); err != nil {
		return nil, false
	}
	return b.Bytes(), true
}
