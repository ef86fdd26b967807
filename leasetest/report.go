package leasetest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/model"
)

// Result is one property's outcome.
type Result struct {
	Property string
	// Skipped says why the property does not apply to the backend (its
	// Info); nothing else is set then.
	Skipped string
	// Finding names the missing protection the backend's Info declares,
	// when the property showed its cost (Zombie, for writes that are not
	// fenced); Evidence is the answer that shows it.
	Finding, Evidence string
	// Failures are the answers that broke the adapter contract, one line
	// each: `Renew(B, fence 3) = ok, want refused (not-holder): B does not
	// hold the lease [renew-not-holder]`.
	Failures []string
	// Violations and Undecided are the checker's verdict on History.
	Violations []checker.Violation
	Undecided  bool
	// Invalid is why the recorded history is not a valid v1 history (it is
	// then not judged, and not printed).
	Invalid error
	// Notes are what happened that is worth knowing and not a failure:
	// injected faults, checks that could not be judged, and why.
	Notes []string
	// History is everything the property sent and got, as judged.
	History *model.History
	// Saved lists the files written under Options.Out.
	Saved []string
}

// Failed reports whether the property failed: a finding, a broken rule, a
// violation, an undecided or invalid history.
func (r *Result) Failed() bool {
	return r.Finding != "" || len(r.Failures) > 0 || len(r.Violations) > 0 || r.Undecided || r.Invalid != nil
}

// Report renders the result as one block: the property's name and verdict,
// then every failure, the checker's violations, the notes (faults
// injected, checks not judged), and where the history is — or, for a
// failure when it was not saved, the history itself.
func (r *Result) Report() string {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, "    "+format+"\n", args...) }
	switch {
	case r.Skipped != "":
		fmt.Fprintf(&b, "%s: skipped: %s\n", r.Property, r.Skipped)
		return b.String()
	case r.Finding != "":
		fmt.Fprintf(&b, "%s: FINDING: %s\n", r.Property, r.Finding)
		if r.Evidence != "" {
			line("%s", r.Evidence)
		}
	case r.Failed():
		fmt.Fprintf(&b, "%s: FAIL\n", r.Property)
	default:
		fmt.Fprintf(&b, "%s: ok\n", r.Property)
	}
	for _, f := range r.Failures {
		line("%s", f)
	}
	// The checker's violations, rendered the one way every command renders
	// them (package campaign).
	for _, v := range r.Violations {
		var vb strings.Builder
		campaign.WriteViolation(&vb, campaign.FromChecker(v), nil)
		for _, l := range strings.Split(strings.TrimRight(vb.String(), "\n"), "\n") {
			line("%s", l)
		}
	}
	if r.Undecided {
		line("the checker: linearizability undecided within the budget (Options.CheckTimeout)")
	}
	if r.Invalid != nil {
		line("the recorded history is not a valid v1 history, so it was not judged: %v", r.Invalid)
	}
	for _, n := range r.Notes {
		line("%s", n)
	}
	saved := ""
	for _, s := range r.Saved {
		if strings.HasSuffix(s, ".jsonl") {
			saved = s
		}
	}
	switch {
	case saved != "" && r.Invalid == nil:
		line("history: %s (leasecheck check %s)", saved, saved)
	case saved != "":
		line("history (refused by leasecheck check): %s", saved)
	case r.Failed() && r.Invalid == nil && r.History != nil:
		var h bytes.Buffer
		model.WriteHistory(&h, r.History)
		line("the history (save it with Options.Out or %s=DIR, then leasecheck check FILE):", outEnv)
		for _, l := range strings.Split(strings.TrimRight(h.String(), "\n"), "\n") {
			line("  %s", l)
		}
	}
	return b.String()
}

// judge has the checker decide every property on the history, once it
// has validated it by the rules `leasecheck check` applies to a file
// (checker.Check refuses a malformed history with the reader's own
// message), so the suite never judges — or prints — a history the command
// line rejects.
func judge(ctx context.Context, res *Result, opts Options) {
	cr, err := checker.Check(ctx, res.History, checker.Options{Timeout: opts.CheckTimeout})
	if err != nil {
		res.Invalid = err
		return
	}
	res.Violations = cr.Violations
	res.Undecided = cr.Undecided()
}

// save writes the history and the report under dir (nothing when dir is
// empty): <Property>.history.jsonl, or <Property>.invalid.jsonl when the
// history is not valid, and <Property>.txt.
func (r *Result) save(dir string) {
	if dir == "" || r.History == nil {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.Notes = append(r.Notes, fmt.Sprintf("not saved: %v", err))
		return
	}
	name := r.Property + ".history.jsonl"
	if r.Invalid != nil {
		name = r.Property + ".invalid.jsonl"
	}
	hp := filepath.Join(dir, name)
	var h bytes.Buffer
	model.WriteHistory(&h, r.History)
	if err := os.WriteFile(hp, h.Bytes(), 0o644); err != nil {
		r.Notes = append(r.Notes, fmt.Sprintf("not saved: %v", err))
		return
	}
	r.Saved = append(r.Saved, hp)
	rp := filepath.Join(dir, r.Property+".txt")
	r.Saved = append(r.Saved, rp)
	if err := os.WriteFile(rp, []byte(r.Report()), 0o644); err != nil {
		r.Saved = r.Saved[:len(r.Saved)-1]
		r.Notes = append(r.Notes, fmt.Sprintf("report not saved: %v", err))
	}
}
