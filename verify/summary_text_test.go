package verify

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/model"
)

// The summary's header for a fence-less lock library says each declaration
// once (never "none: none:" or "no: none:"), and a run whose clock
// uncertainty is not small beside the TTL says what that costs the expiry
// checks; one where it is small does not.
func TestSummaryTextDeclarations(t *testing.T) {
	info := backend.Info{Name: "bsm/redislock", Fences: backend.NoFences, Writes: backend.UncheckedWrites,
		FenceSource: "none: redislock grants no fencing token", FencedWrite: "none: a plain SET of the data key after taking the lock",
		ExpiryLateness: 5 * time.Second}
	text := func(u, ttl int64) string {
		s := newSummary(info, campaign.NewSummary("backend:x", 1, []faults.Kind{faults.Pause}, []string{"linearizable"}, false), nil)
		s.add(&campaign.Outcome{Execution: &campaign.Execution{History: &model.History{Header: model.Header{ClockUncertainty: u},
			Ops: []model.Op{{Kind: model.Acquire, TTL: ttl}}}}})
		var b bytes.Buffer
		s.writeText(&b, "redis://127.0.0.1:1", info, time.Second)
		return b.String()
	}
	out := text(4_900_000, 2_000_000)
	for _, bad := range []string{"none: none", "no: none", " ms"} {
		if strings.Contains(out, bad) {
			t.Errorf("summary says %q:\n%s", bad, out)
		}
	}
	for _, want := range []string{"fences                     none: redislock grants no fencing token",
		"fenced writes              no: a plain SET", "expiry lateness            <= 5000ms",
		"note: the clock uncertainty (4900ms) is at least half the TTL (2000ms)"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if out := text(100_000, 2_000_000); strings.Contains(out, "note: the clock uncertainty") {
		t.Errorf("a 0.1 s uncertainty on a 2 s TTL gets the note:\n%s", out)
	}
}
