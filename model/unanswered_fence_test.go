package model_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/model"
)

// An acquire that never returned cannot name a fence: every
// reader refuses it, naming the line — the whole-file reader, the
// streaming reader and Validate of a history built in memory — and the
// same acquire without the fence, or answered with it, is fine.
func TestUnansweredAcquireWithFenceRefused(t *testing.T) {
	const header = `{"format":"leasecheck/history","version":1}` + "\n"
	bad := header +
		`{"process":"a","op":"acquire","ttl":5,"call":0,"return":1,"ok":true,"fence":1}` + "\n" +
		`{"process":"b","op":"acquire","ttl":5,"call":2,"fence":2}` + "\n"
	good := []string{
		header + `{"process":"b","op":"acquire","ttl":5,"call":2}` + "\n",
		header + `{"process":"b","op":"acquire","ttl":5,"call":2,"return":3,"ok":true,"fence":1}` + "\n",
	}
	wantLine := func(what string, err error) {
		t.Helper()
		var pe *model.ParseError
		if !errors.As(err, &pe) || pe.Line != 3 || !strings.Contains(pe.Reason, "never returned") {
			t.Errorf("%s: %v, want a refusal at line 3 naming the unanswered acquire", what, err)
		}
	}
	_, err := model.ReadHistory(strings.NewReader(bad), "bad")
	wantLine("ReadHistory", err)

	r := model.NewReader(strings.NewReader(bad), "bad")
	for err == nil || !errors.Is(err, io.EOF) {
		if _, err = r.Next(); err != nil {
			break
		}
	}
	wantLine("Reader.Next", err)

	h := &model.History{Name: "mem", Header: model.DefaultHeader(), Ops: []model.Op{
		{Line: 2, Process: "a", Kind: model.Acquire, TTL: 5, Call: 0, Return: 1, Returned: true, OK: true, Fence: 1},
		{Line: 3, Process: "b", Kind: model.Acquire, TTL: 5, Call: 2, Fence: 2},
	}}
	wantLine("Validate", model.Validate(h))

	for _, g := range good {
		if _, err := model.ReadHistory(strings.NewReader(g), "good"); err != nil {
			t.Errorf("%q: %v", g, err)
		}
	}
}
