package leasetest

import (
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/impl/memstore"
)

const testTTL = 300 * time.Millisecond

func memstoreFactory() (backend.Backend, func(), error) {
	return backend.InProcess(memstore.New(), time.Millisecond, nil), nil, nil
}

// TestReference: the reference coordinator (internal/impl/memstore through
// InProcess) passes every property.
func TestReference(t *testing.T) {
	Run(t, memstoreFactory, Options{Info: backend.InProcessInfo("memstore"), TTL: testTTL})
}
