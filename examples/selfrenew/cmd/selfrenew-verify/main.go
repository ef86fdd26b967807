// Command selfrenew-verify runs verify against the background-renewing
// example library on a real Redis: --backend selfrenew (a redis-server
// started here), selfrenew-late (its context cancelled 5 s late), or
// selfrenew+redis://HOST:PORT.
package main

import (
	"example.com/leasecheck-examples/selfrenew"
	"github.com/leasecheck/leasecheck/verify"
)

func main() { verify.Main(selfrenew.Verify()...) }
