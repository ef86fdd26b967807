package sim

import (
	"github.com/leasecheck/leasecheck/internal/impl/memstore"
	"github.com/leasecheck/leasecheck/machine"
)

// NewRefCoordinator returns a fresh reference coordinator: memstore.Store
// (lease.py's semantics), whose whole state is durable, as a
// machine.Coordinator.
func NewRefCoordinator() machine.Coordinator { return machine.ClockedCoordinator(memstore.New()) }

// NewRefResource returns a fresh reference fenced resource.
func NewRefResource() machine.Resource { return memstore.NewResource() }
