// Command redislock-verify is `leasecheck verify` for bsm/redislock: the
// whole of verify — its flags, real faults, summary, saved and shrunk
// failures, exit statuses — run by package verify's entry point with the
// adapter of examples/redislock as its one backend. A user's own lock gets
// the same with its own verify.Backend.
//
//	cd examples && go run ./redislock/cmd/redislock-verify --backend redis://127.0.0.1:6379 --faults pause,freeze --seeds 5
//
// It exits 1: redislock grants no fencing token and the data is written
// with a plain SET, so a holder paused (or frozen, its clock with it) past
// its TTL writes after the lock moved on.
package main

import (
	"example.com/leasecheck-examples/redislock"
	"github.com/leasecheck/leasecheck/verify"
)

func main() { verify.Main(redislock.Verify(), redislock.VerifyProcesses()) }
