package explore_test

import (
	"github.com/leasecheck/leasecheck/internal/explore"
	"github.com/leasecheck/leasecheck/internal/explorejudge"
)

// Every search of these tests is judged by leasecheck's judges, which the
// explorer takes from its caller.
func init() { explore.SetDefaultJudges(explorejudge.Judges{}) }
