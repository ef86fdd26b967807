package main

import (
	"slices"
	"strings"
	"testing"
)

// A report as apidiff -m -incompatible writes it.
const sample = `- ./model.(*Op).DescribeIn: removed
- ./model.Times: removed
- ./vclient/k8slease.SweepConfig.Target: removed
- ./impl/backend.Info.FencedWrites: removed
- ./faults.Plan.Validate: changed from func([]string, int64) error to func([]string) error
- ./cmd/leasecheck.Helper: removed
- ./internal/scenario.Process.Work: removed
- package github.com/leasecheck/leasecheck/examples/redislock: removed
- github.com/other/mod.Thing.Field: removed
`

func TestParseReport(t *testing.T) {
	got, err := parseReport(strings.NewReader(sample), module)
	if err != nil {
		t.Fatal(err)
	}
	want := []change{
		{Pkg: "model", Name: "Op.DescribeIn", What: "removed"},
		{Pkg: "model", Name: "Times", What: "removed"},
		{Pkg: "vclient/k8slease", Name: "SweepConfig.Target", What: "removed"},
		{Pkg: "impl/backend", Name: "Info.FencedWrites", What: "removed"},
		{Pkg: "faults", Name: "Plan.Validate", What: "changed from func([]string, int64) error to func([]string) error"},
		{Pkg: "cmd/leasecheck", Name: "Helper", What: "removed"},
		{Pkg: "internal/scenario", Name: "Process.Work", What: "removed"},
		{Pkg: "examples/redislock", What: "removed"},
		{Pkg: "github.com/other/mod", Name: "Thing.Field", What: "removed", External: true},
	}
	if len(got) != len(want) {
		t.Fatalf("parsed %d changes, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		want[i].Line = got[i].Line
		if got[i] != want[i] {
			t.Errorf("line %d: %+v, want %+v", i+1, got[i], want[i])
		}
	}
	if _, err := parseReport(strings.NewReader("Incompatible changes:\n"), module); err == nil {
		t.Error("a line that is no change was read as one")
	}
	if pkg, name := splitObject("model.(*Set[K]).Add"); pkg != "model" || name != "Set.Add" {
		t.Errorf("splitObject of a generic method: %q %q", pkg, name)
	}
}

var doors = []string{"model", "faults", "impl/backend", "vclient", "vclient/k8slease"}

func allowList(t *testing.T, text string) []allowed {
	t.Helper()
	a, err := parseAllow(strings.NewReader(text), "api-allow", doors)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The planned deletions pass; a planted removal of a public name fails, as
// does every other way round the rules.
func TestJudge(t *testing.T) {
	deprecated := map[string][]string{"model": {"Op.DescribeIn", "Times"}, "vclient/k8slease": {"SweepConfig.Target"}}
	removed := func(lines ...string) []change {
		t.Helper()
		c, err := parseReport(strings.NewReader(strings.Join(lines, "\n")), module)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	planned := removed("- ./model.(*Op).DescribeIn: removed", "- ./model.Times: removed", "- ./vclient/k8slease.SweepConfig.Target: removed",
		"- ./cmd/leasecheck.Helper: removed", "- package github.com/leasecheck/leasecheck/examples/redislock: removed")
	const plannedList = "# deleted in v0.16.0\nmodel.Op.DescribeIn v0.15.0\nmodel.Times v0.15.0 # the time rendering\n\nvclient/k8slease.SweepConfig.Target v0.15.0\n"

	v := judge(planned, allowList(t, plannedList), deprecated, "v0.15.0", doors)
	if len(v.Problems) != 0 || len(v.Allowed) != 3 || len(v.Ignored) != 2 {
		t.Fatalf("the planned deletions: %+v; want 3 allowed, 2 outside the doors, no problem", v)
	}

	for _, tc := range []struct {
		name     string
		changes  []change
		allow    string
		baseline string
		want     string
	}{
		{"a planted removal of a public name", slices.Concat(planned, removed("- ./model.ReadHistory: removed")), plannedList, "v0.15.0", "model.ReadHistory: removed (not on the allow-list)"},
		{"a deprecated name deleted but not listed", removed("- ./model.Times: removed"), "", "v0.15.0", `model.Times: removed (not on the allow-list; v0.15.0 deprecated it: if this is its planned deletion, list "model.Times RELEASE"`},
		{"a changed signature", slices.Concat(planned, removed("- ./faults.Plan.Validate: changed from func() to func(int)")), plannedList, "v0.15.0", "Plan.Validate: changed from"},
		{"a listed name, not deprecated, that is changed", removed("- ./model.Header: changed from a to b"), "model.Header v0.15.0", "v0.15.0", "not this"},
		{"a listed public type changed to another public type", removed("- ./model.Header.Ops: changed from []github.com/leasecheck/leasecheck/model.Op to []Op2"), "model.Header.Ops v0.15.0", "v0.15.0", "not this"},
		{"a listed name the baseline did not deprecate", removed("- ./model.Header: removed"), "model.Header v0.15.0", "v0.15.0", "model.Header was not deprecated in v0.15.0"},
		{"a deprecation under the policy deleted after one release", removed("- ./model.Times: removed"), "model.Times v0.16.0", "v0.16.0", "lives at least two minor releases"},
		{"a deprecation said to come after the baseline", removed("- ./model.Times: removed"), "model.Times v0.17.0", "v0.16.0", "after the baseline"},
		{"a stale entry", nil, "model.Times v0.15.0", "v0.15.0", "model.Times is not removed against v0.15.0"},
		{"a door gone", removed("- package github.com/leasecheck/leasecheck/vclient: removed"), "", "v0.15.0", "a door is gone"},
		{"a house type a door hands out", removed("- ./internal/scenario.Process.Work: removed"), "", "v0.15.0", "a house type a door hands out changed"},
		{"another module's type", removed("- github.com/other/mod.Thing.Field: removed"), "", "v0.15.0", "another module"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := judge(tc.changes, allowList(t, tc.allow), deprecated, tc.baseline, doors)
			if !slices.ContainsFunc(v.Problems, func(p string) bool { return strings.Contains(p, tc.want) }) {
				t.Errorf("problems %q; want one saying %q", v.Problems, tc.want)
			}
		})
	}

	// A listed name may change where it was deprecated (replaced by the
	// door's own) or where its old type was internal: no user could name it.
	v = judge(removed("- ./model.Times: changed from a to b", "- ./vclient/k8slease.SweepResult.Summary: changed from *github.com/leasecheck/leasecheck/internal/campaign.Summary to *Summary"),
		allowList(t, "model.Times v0.15.0\nvclient/k8slease.SweepResult.Summary v0.15.0"), deprecated, "v0.15.0", doors)
	if len(v.Problems) != 0 || len(v.Allowed) != 2 {
		t.Errorf("a deprecated name replaced, an internal type made the door's own: %+v; want both allowed", v)
	}
	// Unlisted, the same changes fail.
	v = judge(removed("- ./vclient/k8slease.SweepResult.Summary: changed from *github.com/leasecheck/leasecheck/internal/campaign.Summary to *Summary"), nil, deprecated, "v0.15.0", doors)
	if len(v.Problems) != 1 {
		t.Errorf("an unlisted change of an internal type: %+v; want a problem", v)
	}

	// Under the policy, a deprecation that lived two minor releases goes.
	v = judge(removed("- ./model.Times: removed"), allowList(t, "model.Times v0.16.0"), deprecated, "v0.17.0", doors)
	if len(v.Problems) != 0 || len(v.Allowed) != 1 {
		t.Errorf("deprecated in v0.16.0, deleted after v0.17.0: %+v; want allowed", v)
	}
}

func TestParseAllowErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"model.Times", "api-allow:1: \"model.Times\": want"},
		{"\nmodel.Times 0.15", "api-allow:2: \"0.15\" is not a release"},
		{"checkr.Check v0.15.0", "names no door's name"},
		{"model v0.15.0", "names no door's name"},
	} {
		if _, err := parseAllow(strings.NewReader(tc.text), "api-allow", doors); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseAllow(%q) = %v; want an error saying %q", tc.text, err, tc.want)
		}
	}
	a := allowList(t, "vclient/k8slease.Sweep v0.15.0")
	if len(a) != 1 || a[0].Pkg != "vclient/k8slease" || a[0].Name != "Sweep" {
		t.Errorf("vclient/k8slease.Sweep read as %+v: the longest door wins", a)
	}
}
