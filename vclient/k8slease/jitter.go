package k8slease

import (
	"math/rand/v2"
	_ "unsafe" // for go:linkname

	_ "k8s.io/apimachinery/pkg/util/wait" // jitterRand's package
)

// jitterRand is the one source of randomness client-go's leader election
// draws from: wait.Jitter, which spreads the candidates' retries over
// RetryPeriod·[1, 1+JitterFactor). It is a package variable of
// k8s.io/apimachinery/pkg/util/wait, "so it can be overridden to make unit
// tests deterministic" (its own comment); the harness points it at the
// run's seeded source, so that a run replays exactly. Nothing of client-go
// is changed.
//
//go:linkname jitterRand k8s.io/apimachinery/pkg/util/wait.jitterRand
var jitterRand func() float64

// useJitter points client-go's jitter at r until undo (vclient.RandUser).
func useJitter(r *rand.Rand) (undo func()) {
	old := jitterRand
	jitterRand = r.Float64
	return func() { jitterRand = old }
}
