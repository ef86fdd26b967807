package contract_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/internal/contract"
	"github.com/leasecheck/leasecheck/model"
)

var update = flag.Bool("update", false, "rewrite impl/backend/README.md's contract table from contract.Contract()")

// readme is where the users who adapt a service read the contract.
const readme = "../../impl/backend/README.md"

const (
	tableStart = "<!-- contract table: generated from contract.go by `go test ./internal/contract -update` -->\n"
	tableEnd   = "<!-- end of contract table -->\n"
)

// renderContract is the contract as a Markdown table, one row per rule.
func renderContract() string {
	var b strings.Builder
	b.WriteString("| rule | op | lease state (as the requester sees it) | fence presented | answer | reason | effect |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, r := range contract.Contract() {
		answer := r.Answer.String()
		if r.Fenced {
			answer += " (fenced writes; an unfenced backend accepts it)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %s |\n", r.ID, r.Op, r.State, r.Fence, answer, r.Reason, r.Effect)
	}
	return b.String()
}

// TestContractREADME: impl/backend/README.md shows the contract as contract.go has it.
func TestContractREADME(t *testing.T) {
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	i, j := strings.Index(s, tableStart), strings.Index(s, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("impl/backend/README.md has no contract table between %q and %q", tableStart, tableEnd)
	}
	want := s[:i+len(tableStart)] + renderContract() + s[j:]
	if *update {
		if err := os.WriteFile(readme, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if s != want {
		t.Errorf("impl/backend/README.md's contract table differs from contract.Contract(): run go test ./internal/contract -update and review the diff")
	}
}

// TestContractRules: rule IDs are unique, every op has rows, and every
// row names a state and an answer.
func TestContractRules(t *testing.T) {
	seen := map[string]bool{}
	ops := map[model.Kind]bool{}
	for _, r := range contract.Contract() {
		if seen[r.ID] {
			t.Errorf("rule %s appears twice", r.ID)
		}
		seen[r.ID] = true
		ops[r.Op] = true
		if r.State == 0 || r.Answer == 0 || r.Effect == "" {
			t.Errorf("rule %s: state, answer and effect are required: %+v", r.ID, r)
		}
		if r.Answer == contract.Refused && r.Reason == "" {
			t.Errorf("rule %s: a refusal names its reason", r.ID)
		}
		if got, ok := contract.RuleByID(r.ID); !ok || got.ID != r.ID {
			t.Errorf("RuleByID(%s) = %v, %v", r.ID, got, ok)
		}
	}
	for _, k := range []model.Kind{model.Acquire, model.Renew, model.Release, model.Write, model.Read} {
		if !ops[k] {
			t.Errorf("no rule for %s", k)
		}
	}
	if _, ok := contract.RuleByID("no-such-rule"); ok {
		t.Errorf("RuleByID found a rule that does not exist")
	}
}
