package explore_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/internal/explore"
)

// The default plan written as a plan file reads back as itself.
func TestPlanFileRoundTrip(t *testing.T) {
	var b bytes.Buffer
	if err := explore.WritePlan(&b, explore.DefaultPlan()); err != nil {
		t.Fatal(err)
	}
	got, err := explore.ParsePlan(b.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if !reflect.DeepEqual(got, explore.DefaultPlan()) {
		t.Fatalf("read back %+v\nwant %+v", got, explore.DefaultPlan())
	}
}

// A bad plan file is refused with the line and the reason.
func TestPlanFileErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"not an array", `{"holders": 2}`, "1: a plan is a JSON array"},
		{"empty", "[\n]\n", "1: the plan has no space"},
		{"syntax", "[\n  {\"holders\": 2},\n  {\"holders\": }\n]", "3: space 2: invalid JSON"},
		{"unknown field", "[\n  {\"holders\": 2},\n  {\"holderz\": 3}\n]", `3: space 2: json: unknown field "holderz"`},
		{"wrong type", "[\n\n  {\"holders\": \"three\"}\n]", `3: space 1: field "holders": a string where a int belongs`},
		{"unknown fault", "[\n  {\"faults\": [\"meteor\"], \"max_faults\": 1}\n]", `2: space 1: fault kind "meteor"`},
		{"semantics", "[{\"semantics\": \"eventual\"}]", `1: space 1: semantics "eventual"`},
		{"negative", "[\n{},\n{\"deviations\": -1}]", "3: space 2: holders, max_faults, adversary and deviations must be >= 0"},
		{"too many holders", "[{\"holders\": 40}]", "1: space 1: holders 40"},
		{"margin", "[{\"margin\": -5}]", "1: space 1: margin -5"},
		{"unterminated", "[\n{\"holders\": 2}", "the file ends inside the plan"},
		{"trailing", "[{}]\n{}", "2: text after the plan's closing ]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := explore.ParsePlan([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	// And a good one is taken as written.
	plan, err := explore.ParsePlan([]byte("[\n  {\"holders\": 3, \"faults\": [\"pause\"], \"max_faults\": 1},\n  {\"semantics\": \"fenced-storage\", \"adversary\": 1}\n]\n"))
	if err != nil || len(plan) != 2 || plan[0].Holders != 3 || plan[0].MaxFaults != 1 || plan[1].Semantics != "fenced-storage" {
		t.Fatalf("plan %+v, error %v", plan, err)
	}
}
