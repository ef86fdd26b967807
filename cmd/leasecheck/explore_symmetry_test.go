package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestExploreSymmetryFlag: explore --symmetry --stagger 0 on three holders
// identifies h2 and h3 (the default programs), says so among the
// reductions, and finds fewer distinct states than without it, the same
// verdict; with the default stagger it is off and the text report says why.
func TestExploreSymmetryFlag(t *testing.T) {
	type rep struct {
		Reductions     []string `json:"reductions"`
		DistinctStates int64    `json:"distinct_states"`
		Complete       bool     `json:"complete"`
	}
	explore := func(args ...string) (rep, string) {
		var out, errb bytes.Buffer
		args = append([]string{"explore", "--holders", "3", "--faults", "none", "--progress=false"}, args...)
		if code := run(args, nil, &out, &errb); code != exitOK {
			t.Fatalf("%v: exit %d\n%s", args, code, errb.String())
		}
		var r rep
		if slices.Contains(args, "--json") {
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
		}
		return r, out.String()
	}
	sym, _ := explore("--stagger", "0", "--symmetry", "--json")
	plain, _ := explore("--stagger", "0", "--no-por", "--json")
	if !slices.Contains(sym.Reductions, "holder symmetry (h2=h3)") || slices.Contains(sym.Reductions, "sleep sets") {
		t.Errorf("reductions %v", sym.Reductions)
	}
	if !sym.Complete || !plain.Complete || sym.DistinctStates == 0 || sym.DistinctStates >= plain.DistinctStates {
		t.Errorf("symmetry: complete %v, %d distinct; without: complete %v, %d", sym.Complete, sym.DistinctStates, plain.Complete, plain.DistinctStates)
	}
	if _, text := explore("--symmetry"); !strings.Contains(text, "holder symmetry        off: no two holders have identical programs and start times") {
		t.Errorf("the text report does not say why symmetry is off:\n%s", text)
	}
}
