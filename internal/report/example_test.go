package report_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/internal/report"
	"github.com/leasecheck/leasecheck/model"
)

// A GC-paused holder writes after its lease passed to another: the page
// draws the pause on A's row and the violation where A wrote.
func ExampleWriteTimeline() {
	const file = `{"format":"leasecheck/history","version":1,"time_unit":"ms"}
{"process":"A","op":"acquire","ttl":10,"call":0,"return":1,"at":0,"ok":true,"fence":1}
{"process":"B","op":"acquire","ttl":10,"call":12,"return":13,"at":12,"ok":true,"fence":2}
{"process":"A","op":"write","fence":1,"value":"a1","call":30,"return":31,"at":30,"ok":true}
`
	h, err := model.ReadHistory(strings.NewReader(file), "gc-pause.jsonl")
	if err != nil {
		panic(err)
	}
	h.Faults = []model.FaultRecord{{Kind: "pause", Target: "A", Start: 2, End: 29, HasEnd: true}}
	res, err := checker.Check(context.Background(), h, checker.Options{})
	if err != nil {
		panic(err)
	}
	var page bytes.Buffer
	err = report.WriteTimeline(&page, report.Input{
		History: h,
		Check:   res,
		Beliefs: report.BeliefsFromTrace([]report.TraceLine{
			{T: 1, Node: "A", What: "believes", Detail: "fence=1"},
			{T: 13, Node: "B", What: "believes", Detail: "fence=2"},
			{T: 31, Node: "A", What: "gave-up"},
		}, 31),
		Replay: "leasecheck check gc-pause.jsonl",
	}, report.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.SplitN(page.String(), "\n", 2)[0])
	for _, t := range report.Terms(h, nil) {
		fmt.Printf("%s holds fence %d from t=%d until t=%d (%s)\n", t.Owner, t.Fence, t.Start.Lo, t.End.Lo, t.EndedBy)
	}
	// Output:
	// <!DOCTYPE html>
	// A holds fence 1 from t=0 until t=10 (expiry)
	// B holds fence 2 from t=12 until t=22 (expiry)
}

func ExampleBeliefsFromTrace() {
	trace := []report.TraceLine{
		{T: 3, Node: "h1", What: "believes", Detail: "fence=1"},
		{T: 40, Node: "coordinator", What: "granted", Detail: "h2 fence=2"},
		{T: 41, Node: "h2", What: "believes", Detail: "fence=2"},
		{T: 55, Node: "h1", What: "gave-up"},
	}
	for _, b := range report.BeliefsFromTrace(trace, 60) {
		fmt.Printf("%s believes fence %d from %d to %d (open: %v)\n", b.Process, b.Fence, b.From, b.To, b.Open)
	}
	// Output:
	// h1 believes fence 1 from 3 to 55 (open: false)
	// h2 believes fence 2 from 41 to 60 (open: true)
}
