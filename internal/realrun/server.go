package realrun

import (
	"context"
	"time"
)

// Server is a coordinator process the harness controls, for the
// coordinator-crash fault: stopped with SIGSTOP and resumed with SIGCONT,
// and, when it is a Restarter, killed and started again. Only servers the
// harness started itself are controlled (internal/servers starts them for
// leasecheck's own tests and `verify`).
type Server interface {
	Stop() error // SIGSTOP: the process freezes, its connections stay open
	Cont() error // SIGCONT
}

// Restarter is a Server that can crash and come back with its data.
type Restarter interface {
	Restart(ctx context.Context, down time.Duration) error
}
