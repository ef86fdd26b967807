package checker_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/model"
)

// Check a history: a GC pause made A write under fence 1 after B had been
// granted fence 2. Each property gets its own verdict, and each violation
// names the lines involved and tells what happened.
func ExampleCheck() {
	const file = `{"format":"leasecheck/history","version":1}
{"process":"A","op":"acquire","ttl":10,"fence":1,"call":0,"return":1,"at":0,"ok":true}
{"process":"B","op":"acquire","ttl":10,"fence":2,"call":12,"return":13,"at":12,"ok":true}
{"process":"A","op":"write","fence":1,"value":"a1","call":30,"return":31,"at":30,"ok":true}
`
	h, err := model.ReadHistory(strings.NewReader(file), "pause.jsonl")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := checker.Check(context.Background(), h, checker.Options{})
	if err != nil {
		fmt.Println(err) // a malformed history built in memory
		return
	}
	for _, p := range res.Properties {
		fmt.Println(p.Name, p.Verdict)
	}
	for _, v := range res.Violations {
		fmt.Println(v.Property, v.Lines)
	}
	// Output:
	// linearizable violated
	// single-writer-per-fence holds
	// fence-monotonic holds
	// stop-on-renew-failure holds
	// expiry-lateness holds
	// stale-write holds
	// linearizable [3 4]
}
