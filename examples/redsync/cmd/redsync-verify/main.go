// Command redsync-verify is `leasecheck verify` for go-redsync/redsync:
// --backend redsync (on a redis-server started here) or
// redsync+redis://HOST:PORT.
//
//	cd examples && go run ./redsync/cmd/redsync-verify --backend redsync --faults pause --seeds 3
package main

import (
	"example.com/leasecheck-examples/redsync"
	"github.com/leasecheck/leasecheck/verify"
)

func main() { verify.Main(redsync.Verify(), redsync.VerifyProcesses()) }
