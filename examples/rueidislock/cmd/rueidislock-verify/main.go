// Command rueidislock-verify is `leasecheck verify` for rueidislock (and
// valkey-go's valkeylock, the same code): --backend rueidislock (the
// README's configuration) or rueidislock-defaults, each on a redis-server
// started here.
//
//	cd examples && go run ./rueidislock/cmd/rueidislock-verify --backend rueidislock --faults partition --seeds 5
package main

import (
	"example.com/leasecheck-examples/rueidislock"
	"github.com/leasecheck/leasecheck/verify"
)

func main() { verify.Main(rueidislock.Verify()...) }
