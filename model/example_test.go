package model_test

import (
	"fmt"
	"strings"

	"github.com/leasecheck/leasecheck/model"
)

// Read a history in format v1: an optional header, then one operation per
// line. A malformed line is a *model.ParseError naming the line.
func ExampleReadHistory() {
	const file = `{"format":"leasecheck/history","version":1,"time_unit":"ms","clock_uncertainty":2}
{"process":"A","op":"acquire","ttl":10,"fence":1,"call":0,"return":1,"ok":true}
{"process":"A","op":"write","fence":1,"value":"a-1","call":2,"return":3,"ok":true}
{"process":"B","op":"acquire","ttl":10,"call":4}
`
	h, err := model.ReadHistory(strings.NewReader(file), "h.jsonl")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(h.Header.TimeUnit, h.Header.ClockUncertainty, h.Header.Semantics)
	for _, op := range h.Ops {
		fmt.Printf("line %d: %s\n", op.Line, op.Describe())
	}

	_, err = model.ReadHistory(strings.NewReader(`{"process":"A","op":"renew","call":0}`), "bad.jsonl")
	fmt.Println(err)
	// Output:
	// ms 2 seed
	// line 2: A acquire(ttl=10) -> ok fence=1 [0,1]
	// line 3: A write(fence=1, "a-1") -> ok [2,3]
	// line 4: B acquire(ttl=10) -> ? (no response) [4,-]
	// bad.jsonl:1: field "ttl" is required for renew
}
