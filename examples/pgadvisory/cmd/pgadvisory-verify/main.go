// Command pgadvisory-verify runs verify against PostgreSQL session
// advisory locks held with pgx: --backend pg-advisory (as people write
// it) or pg-advisory-hardened (a heartbeat, an idle-session timeout, the
// work on the lock's session), each on a PostgreSQL started here.
package main

import (
	"example.com/leasecheck-examples/pgadvisory"
	"github.com/leasecheck/leasecheck/verify"
)

func main() { verify.Main(pgadvisory.Verify()...) }
