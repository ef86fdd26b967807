package leasetest_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/leasetest"
	"github.com/leasecheck/leasecheck/model"
)

// only returns Options that run just the named properties.
func only(opts leasetest.Options, names ...string) leasetest.Options {
	for _, p := range leasetest.Properties() {
		if !slices.Contains(names, p) {
			opts.Skip = append(opts.Skip, p)
		}
	}
	return opts
}

// TestFailureLine: a broken answer is reported in the fstest style,
// naming the call, what it returned, what it must have returned, why, and
// the contract rule.
func TestFailureLine(t *testing.T) {
	rs := leasetest.Evaluate(context.Background(), userFactory(seqExact, "renew-any-owner"), only(userOpts(seqExact, "renew-any-owner"), "NotHolder"))
	if len(rs) != 1 {
		t.Fatalf("Evaluate with one property = %d results", len(rs))
	}
	want := "Renew(B, no fence) = ok, want refused (not-holder): A holds the lease (fence 2); B never did [renew-not-holder]"
	if !slices.Contains(rs[0].Failures, want) {
		t.Errorf("failures = %q, want the line %q", rs[0].Failures, want)
	}
	report := rs[0].Report()
	if !strings.HasPrefix(report, "NotHolder: FAIL\n") || !strings.Contains(report, "    "+want+"\n") {
		t.Errorf("report does not start with the verdict and list the failure:\n%s", report)
	}
	if !strings.Contains(report, `{"format":"leasecheck/history"`) {
		t.Errorf("an unsaved failure's report does not print its history:\n%s", report)
	}
}

// TestOut: with LEASETEST_OUT (or Options.Out), every property that ran
// leaves its history and its report; the history is valid v1 that the
// checker judges as the suite did, and the report names it.
func TestOut(t *testing.T) {
	dir := t.TempDir()
	rs := leasetest.Evaluate(context.Background(), userFactory(seqExact, "write-any-owner"),
		only(leasetest.Options{Info: seqExact.info("broken"), TTL: testTTL, Out: dir}, "Acquire", "NotHolder"))
	for _, r := range rs {
		hp := filepath.Join(dir, "broken", r.Property+".history.jsonl")
		rp := filepath.Join(dir, "broken", r.Property+".txt")
		if !slices.Equal(r.Saved, []string{hp, rp}) {
			t.Errorf("%s: saved %q, want %q", r.Property, r.Saved, []string{hp, rp})
			continue
		}
		h, err := model.ReadHistoryFile(hp)
		if err != nil {
			t.Errorf("%s: the saved history is not valid: %v", r.Property, err)
			continue
		}
		cr, err := checker.Check(context.Background(), h, checker.Options{})
		if err != nil || len(cr.Violations) != len(r.Violations) {
			t.Errorf("%s: the saved history checks to %v (err %v), the suite said %d violations", r.Property, cr.Violations, err, len(r.Violations))
		}
		report, err := os.ReadFile(rp)
		if err != nil || string(report) != r.Report() || !strings.Contains(string(report), "history: "+hp) {
			t.Errorf("%s: the saved report (err %v) is not the result's, naming %s:\n%s", r.Property, err, hp, report)
		}
		if strings.Contains(string(report), `{"process"`) {
			t.Errorf("%s: a saved failure's report prints the history instead of naming its file", r.Property)
		}
	}
	if rs[1].Property != "NotHolder" || !rs[1].Failed() || rs[0].Failed() {
		t.Errorf("write-any-owner: Acquire failed %v, NotHolder failed %v; want only NotHolder", rs[0].Failed(), rs[1].Failed())
	}
}

// TestOutEnv: Run with LEASETEST_OUT saves under a folder named after the
// test.
func TestOutEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("LEASETEST_OUT", dir)
	t.Run("suite", func(t *testing.T) {
		leasetest.Run(t, userFactory(seqExact, ""), only(userOpts(seqExact, "userlock"), "Acquire", "MutualExclusion"))
	})
	for _, p := range []string{"Acquire", "MutualExclusion"} {
		for _, ext := range []string{".history.jsonl", ".txt"} {
			path := filepath.Join(dir, "TestOutEnv_suite", p+ext)
			if _, err := os.Stat(path); err != nil {
				t.Errorf("LEASETEST_OUT: %v", err)
			}
		}
	}
}

// TestInvalidHistory: answers that make the recorded history invalid
// (sequential fences declared, a grant without one) are reported as such:
// the history is not judged, not printed, and saved apart.
func TestInvalidHistory(t *testing.T) {
	dir := t.TempDir()
	rs := leasetest.Evaluate(context.Background(), userFactory(seqExact, "fence-not-granted"),
		only(leasetest.Options{Info: seqExact.info("nofence"), TTL: testTTL, Out: dir}, "MutualExclusion"))
	r := rs[0]
	if r.Invalid == nil || len(r.Violations) > 0 {
		t.Fatalf("Invalid = %v, violations %v; want an invalid history, not judged", r.Invalid, r.Violations)
	}
	if want := filepath.Join(dir, "nofence", "MutualExclusion.invalid.jsonl"); !slices.Contains(r.Saved, want) {
		t.Errorf("saved %q, want %s", r.Saved, want)
	}
	r.Saved = nil
	report := r.Report()
	if strings.Contains(report, `{"process"`) || !strings.Contains(report, "not a valid v1 history") {
		t.Errorf("the report of an invalid history prints it or does not say why:\n%s", report)
	}
	want := "Acquire(A) = ok, want ok with a fence >= 1: Info.Fences is sequential [acquire-free]"
	if !slices.Contains(r.Failures, want) {
		t.Errorf("failures = %q, want %q", r.Failures, want)
	}
}

// TestExpect: a property listed in Options.Expect must fail; one that
// passes, or does not apply, is the error.
func TestExpect(t *testing.T) {
	ctx := context.Background()
	zombie := only(userOpts(seqExact, "zombie-grace"), "Zombie")
	zombie.Expect = []string{"Zombie"}
	if err := leasetest.Check(ctx, userFactory(seqExact, "zombie-grace"), zombie); err != nil {
		t.Errorf("Check(zombie-grace, Expect Zombie) = %v, want nil: the expected failure happened", err)
	}
	if err := leasetest.Check(ctx, userFactory(seqExact, ""), zombie); err == nil || !strings.Contains(err.Error(), "Zombie: passed, but Options.Expect lists it") {
		t.Errorf("Check(correct, Expect Zombie) = %v, want the stale expectation reported", err)
	}
	fences := only(userOpts(noFenceGuarded, "nofences"), "FenceIncreases")
	fences.Expect = []string{"FenceIncreases"}
	if err := leasetest.Check(ctx, userFactory(noFenceGuarded, ""), fences); err == nil || !strings.Contains(err.Error(), "does not apply") {
		t.Errorf("Check(no fences, Expect FenceIncreases) = %v, want \"does not apply\"", err)
	}
	if err := leasetest.Check(ctx, userFactory(seqExact, "zombie-grace"), only(userOpts(seqExact, "zombie-grace"), "Zombie")); err == nil || !strings.HasPrefix(err.Error(), "Zombie: FAIL") {
		t.Errorf("Check(zombie-grace) = %v, want Zombie's report", err)
	}
}
