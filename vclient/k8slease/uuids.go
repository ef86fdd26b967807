package k8slease

import (
	"sync"

	"github.com/google/uuid"

	"github.com/leasecheck/leasecheck/vclient"
)

// uuidMu serializes SeedUUIDs: github.com/google/uuid's source is
// process-wide.
var uuidMu sync.Mutex

// SeedUUIDs runs build — the call that makes your client's identity:
// manager.New, for controller-runtime's manager, whose Lease holder is
// hostname_uuid — while github.com/google/uuid (which k8s.io/apimachinery's
// uuid.NewUUID draws from) draws from candidate c's own seeded source
// (Candidate.Rand), and restores uuid's default source (crypto/rand)
// after. A replay then draws the same identities, and a manager rebuilt by
// the same incarnation draws a new one, as a restarted process does.
// Which string a candidate writes as its Lease's holder does not reach the
// history either way: the API server a sweep runs against takes the
// holder a candidate writes for that candidate (SweepConfig.Server).
//
//	var mgr manager.Manager
//	err := k8slease.SeedUUIDs(c, func() (err error) { mgr, err = manager.New(cfg, opts); return err })
func SeedUUIDs(c *vclient.Candidate, build func() error) error {
	uuidMu.Lock()
	defer uuidMu.Unlock()
	uuid.SetRand(source{c})
	defer uuid.SetRand(nil)
	return build()
}

// source is an io.Reader of a candidate's seeded source.
type source struct{ c *vclient.Candidate }

func (s source) Read(p []byte) (int, error) {
	r := s.c.Rand()
	for i := range p {
		p[i] = byte(r.Uint32())
	}
	return len(p), nil
}
