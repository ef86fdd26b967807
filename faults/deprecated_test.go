package faults

import (
	"encoding/json"
	"reflect"
	"testing"
)

// The plan combinators are deprecated; they keep
// working, as tested here, until they leave the package.

func TestCombinators(t *testing.T) {
	p := Repeat(Fault{Kind: Pause, Target: "h1", At: 10, Duration: 5}, 3, 100)
	if len(p) != 3 || p[2].At != 210 {
		t.Fatalf("Repeat = %v", p)
	}
	q := Sequence(Shift(p, 50), Plan{{Kind: Crash, Target: "h2", At: 100}})
	var ats []int64
	for _, f := range q {
		ats = append(ats, f.At)
	}
	if !reflect.DeepEqual(ats, []int64{60, 100, 160, 260}) {
		t.Fatalf("Sequence order %v", ats)
	}
	if q.Counts()[Pause] != 3 {
		t.Fatalf("Counts = %v", q.Counts())
	}
	b, _ := json.Marshal(q)
	var back Plan
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, q) {
		t.Fatalf("JSON round trip: %v %v", back, err)
	}
}
