package campaign

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/model"
)

// A frozen holder whose three late writes under its old fence were accepted
// after the next holder's is one fence-monotonic finding citing its three
// writes, told once, each write listed as the op it is — not three
// violations with the same story; Violations (the JSON) keeps all three.
func TestViolationsGroupedByCause(t *testing.T) {
	const file = `{"format":"leasecheck/history","version":1,"time_unit":"ms","clock_uncertainty":0,"semantics":"seed"}
{"process":"A","op":"acquire","ttl":5,"call":0,"return":1,"at":0,"ok":true,"fence":1}
{"process":"B","op":"acquire","ttl":10,"call":6,"return":7,"at":6,"ok":true,"fence":2}
{"process":"B","op":"write","fence":2,"value":"b1","call":8,"return":9,"at":8,"ok":true}
{"process":"A","op":"write","fence":1,"value":"a1","call":10,"return":11,"at":10,"ok":true}
{"process":"A","op":"write","fence":1,"value":"a2","call":11,"return":12,"at":11,"ok":true}
{"process":"A","op":"write","fence":1,"value":"a3","call":12,"return":13,"at":12,"ok":true}
`
	path := filepath.Join(t.TempDir(), "h.history.jsonl")
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := model.ReadHistoryFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := checker.Check(context.Background(), h, checker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	o := &Outcome{Execution: &Execution{History: h}, Check: res}
	var n int
	for _, v := range o.Violations() {
		if v.Property == checker.FenceMonotonic {
			n++
		}
	}
	if n < 3 {
		t.Fatalf("the checker reports %d fence-monotonic violations, want one per write: %+v", n, res.Violations)
	}
	var grouped []Violation
	for _, v := range o.ByCause() {
		if v.Property == checker.FenceMonotonic {
			grouped = append(grouped, v)
		}
	}
	if len(grouped) != 1 {
		t.Fatalf("%d fence-monotonic findings, want 1: %+v", len(grouped), grouped)
	}
	g := grouped[0]
	if want := []int{4, 5, 6, 7}; len(g.Lines) != len(want) {
		t.Errorf("the finding cites lines %v, want %v", g.Lines, want)
	}
	if !strings.Contains(g.Explanation, "also explains") {
		t.Errorf("the finding does not list the other writes: %s", g.Explanation)
	}
	var b bytes.Buffer
	WriteOutcome(&b, o)
	if n := strings.Count(b.String(), "VIOLATION fence-monotonic"); n != 1 {
		t.Errorf("the report tells %d fence-monotonic findings, want 1:\n%s", n, b.String())
	}
	if err := CheckCitedLines(path, b.String()); err != nil {
		t.Errorf("the grouped finding cites its lines wrong: %v\n%s", err, b.String())
	}
}
