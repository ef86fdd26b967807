package checker

import "time"

// slowFactor deliberately slows every key's check, for the test that shows
// the class regression check catching a slower checker
// (internal/classbench): only a build with the tag leasecheck_slow sets it.
// After each key it sleeps slowFactor times what the key took, plus
// slowFloor.
var slowFactor int

const slowFloor = 20 * time.Millisecond

// slowDown is where a deliberately slowed build loses its time.
func slowDown(start time.Time) {
	if slowFactor > 0 {
		time.Sleep(time.Duration(slowFactor)*time.Since(start) + slowFloor)
	}
}
