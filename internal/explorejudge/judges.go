package explorejudge

import (
	"context"
	"time"

	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/explore"
	"github.com/leasecheck/leasecheck/internal/runprop"
	"github.com/leasecheck/leasecheck/internal/runrecord"
	"github.com/leasecheck/leasecheck/internal/sim"
)

// Judges are leasecheck's judges of the explored states (explore.Judges).
type Judges struct{}

var _ explore.Judges = Judges{}

// Properties is campaign.Properties (made once: properties).
func (Judges) Properties() []string { return properties }

// NewMonitor returns a fresh per-state monitor.
func (Judges) NewMonitor(c explore.MonitorConfig) explore.Monitor {
	return &monitor{blind: c.Blind, verify: c.Verify}
}

// Judge judges r as campaign judges a run (campaign.JudgeExecution), the
// checker only when withChecker.
func (Judges) Judge(r *sim.Result, s *runrecord.Setting, withChecker bool, budget time.Duration) (explore.Judgement, error) {
	var j explore.Judgement
	if !withChecker {
		// The run properties alone: most states judged this way violate
		// nothing, and their judgement needs no outcome (the explorer reads
		// it only of a violation).
		if len(runprop.Judge(sim.RecordWith(r, s))) == 0 {
			return j, nil
		}
	}
	ex := &campaign.Execution{Scenario: r.Scenario, History: r.History, Sim: r, Faults: r.Stats.Faults}
	out, err := campaign.JudgeExecution(context.Background(), ex, campaign.JudgeOptions{Budget: budget, RunOnly: !withChecker})
	if err != nil {
		return j, err
	}
	j.Undecided, j.Failed, j.Explain = out.Undecided(), out.Failed(), (*outcome)(out)
	return j, nil
}

// NeedsChecker: a flag of a property the run properties do not judge.
func (Judges) NeedsChecker(flags []string) bool {
	for _, f := range flags {
		if !campaign.IsRunProperty(f) {
			return true
		}
	}
	return false
}

// EndOnly: a crash never recovered from shows only at a path's end
// (liveness-recovery), which the monitor cannot flag before.
func (Judges) EndOnly(p string) bool { return p == runprop.LivenessRecovery }

// outcome explains a judged run's failures: a finding's story where one
// tells it, else the checker's violation's.
type outcome campaign.Outcome

func (o *outcome) Explain(p string) (explanation string, lines, traceLines []int) {
	for _, v := range o.Check.Violations {
		if v.Property == p {
			explanation, lines = v.Explanation, v.Lines
			break
		}
	}
	for _, f := range o.Findings {
		if f.Property == p {
			explanation, lines, traceLines = f.Explanation, f.Lines, f.TraceLines
			break
		}
	}
	return explanation, lines, traceLines
}
