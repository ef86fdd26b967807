//go:build leasecheck_slow

package checker

// A deliberately slowed checker (see slow.go): ten times slower, and never
// under 20 ms a key.
func init() { slowFactor = 10 }
