package k8slease

import (
	"encoding/json"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/leasecheck/leasecheck/vclient"
)

// serveEvent answers the Events a leader election's recorder sends (core/v1,
// /api/v1/namespaces/NS/events): a create is accepted and echoed, as the
// API server stores it; a patch (the recorder's count of a repeated event)
// finds nothing to patch, and the recorder creates the event anew, as it
// does when the API server has dropped it. Events touch no lease: they go
// to the trace only. ok is false for any other path.
func serveEvent(req *http.Request, body []byte) (resp *http.Response, detail string, ok bool) {
	rest, found := strings.CutPrefix(req.URL.Path, "/api/v1/namespaces/")
	parts := strings.Split(rest, "/")
	if !found || len(parts) < 2 || parts[1] != "events" || len(parts) > 3 {
		return nil, "", false
	}
	gr := schema.GroupResource{Resource: "events"}
	if req.Method == http.MethodPost && len(parts) == 2 {
		var e corev1.Event
		if err := json.Unmarshal(body, &e); err != nil {
			return status(apierrors.NewBadRequest(err.Error())), "400 event: " + err.Error(), true
		}
		e.Kind, e.APIVersion = "Event", "v1"
		b, err := json.Marshal(&e)
		if err != nil {
			panic(err) // an Event always marshals
		}
		return vclient.Response(http.StatusCreated, b), "event " + e.Reason + ": " + e.Message, true
	}
	if len(parts) == 3 {
		return status(apierrors.NewNotFound(gr, parts[2])), "", true
	}
	return status(apierrors.NewMethodNotSupported(gr, req.Method)), "405 event " + req.Method, true
}
