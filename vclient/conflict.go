package vclient

import (
	"fmt"
	"net/http"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/faultsupport"
	"github.com/leasecheck/leasecheck/model"
)

// conflict answers c with 409 Conflict, applying nothing, when it is an
// update (PUT or PATCH) from a candidate under a conflict fault at t, and
// reports whether it did. Reads and creates go through: the fault is the
// answer an optimistic-concurrency store gives a write whose
// resourceVersion went stale, and only a write carries one to refuse.
func (w *world) conflict(c *call, t int64, rep *reply) bool {
	if c.req.Method != http.MethodPut && c.req.Method != http.MethodPatch {
		return false
	}
	for i, f := range w.sc.Faults {
		if f.Kind == faults.Conflict && f.Target == c.cand.Node && faultsupport.During(f, t) {
			rep.resp = Response(http.StatusConflict, conflictBody)
			w.rec.traceLocked(t, c.cand.Name, "refused", c.what()+": 409 Conflict, not applied (a conflict fault)")
			w.rec.struck(i, t, c.cand.Name, fmt.Sprintf("first refused %s's %s at t=%d", c.cand.Name, c.what(), t))
			return true
		}
	}
	return false
}

var conflictBody = []byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled: the object has been modified; please apply your changes to the latest version and try again","reason":"Conflict","code":409}`)

// conflictRecord fills a conflict fault's history record: proc is the
// incarnation whose update it first refused ("": none reached the server
// in its window, so it refused nothing and the record is partial).
func conflictRecord(fr *model.FaultRecord, f faults.Fault, proc, why string) {
	if proc == "" {
		fr.Partial = true
		fr.Detail = fmt.Sprintf("no update of %s's reached the lease server in [%d, %d): nothing refused", f.Target, f.At, f.At+f.Duration)
		return
	}
	fr.Target = proc
	fr.Detail = "the lease server answered 409 Conflict to every update, applying none; " + why
}
