package timed

import (
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/model"
)

// verifyHistory is a small interval-mode history: A holds fence 1 and
// writes v1 (answered) and v2 (never answered, but B reads it), B reads
// v2, A's renew is never answered, C is granted fence 2 after the lease
// ran out.
const verifyHistory = `{"format":"leasecheck/history","version":1,"clock_uncertainty":1}
{"process":"A","op":"acquire","ttl":10,"fence":1,"call":0,"return":1,"ok":true}
{"process":"A","op":"write","fence":1,"value":"v1","call":2,"return":3,"ok":true}
{"process":"A","op":"write","fence":1,"value":"v2","call":4}
{"process":"B","op":"read","value":"v2","call":5,"return":6,"ok":true}
{"process":"A","op":"renew","ttl":10,"fence":1,"call":6}
{"process":"C","op":"acquire","ttl":10,"fence":2,"call":30,"return":31,"ok":true}
`

func verifyKey(t *testing.T) (*model.History, *KeyOps) {
	t.Helper()
	h, err := model.ReadHistory(strings.NewReader(verifyHistory), "verify")
	if err != nil {
		t.Fatal(err)
	}
	c := Compile(h)
	return h, &c.Keys[0]
}

// The judge accepts a real linearization and refuses each way a search
// could get one wrong: an op left out or placed twice, an applied mark on
// an answered op (or none on an unanswered one), real time or process
// order broken, and an order the model cannot explain.
func TestVerifyLinearization(t *testing.T) {
	h, ko := verifyKey(t)
	good := []Placement{{0, false}, {1, false}, {2, true}, {3, false}, {5, false}}
	if err := VerifyLinearization(h, ko, good); err != nil {
		t.Fatalf("a linearization refused: %v", err)
	}
	// The unanswered renew may take effect too, early enough for C.
	withRenew := []Placement{{0, false}, {1, false}, {2, true}, {3, false}, {4, true}, {5, false}}
	if err := VerifyLinearization(h, ko, withRenew); err != nil {
		t.Fatalf("a linearization with the renew applied refused: %v", err)
	}
	for _, tc := range []struct {
		name  string
		order []Placement
		want  string
	}{
		{"a completed op left out", []Placement{{0, false}, {1, false}, {2, true}, {3, false}}, "never placed"},
		{"an op placed twice", []Placement{{0, false}, {1, false}, {1, false}, {2, true}, {3, false}, {5, false}}, "placed twice"},
		{"an answered op marked applied", []Placement{{0, true}, {1, false}, {2, true}, {3, false}, {5, false}}, "marked applied"},
		{"an unanswered op not marked applied", []Placement{{0, false}, {1, false}, {2, false}, {3, false}, {5, false}}, "marked applied"},
		{"process order broken", []Placement{{1, false}, {0, false}, {2, true}, {3, false}, {5, false}}, "of its process"},
		{"real time broken", []Placement{{0, false}, {5, false}, {1, false}, {2, true}, {3, false}}, "returned"},
		{"the read before the write it reads", []Placement{{0, false}, {1, false}, {3, false}, {2, true}, {5, false}}, "no state explains"},
		{"the unanswered write left out", []Placement{{0, false}, {1, false}, {3, false}, {5, false}}, "no state explains"},
		{"an op of another history", []Placement{{0, false}, {9, false}}, "not an op"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := VerifyLinearization(h, ko, tc.order)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// An applied op reads the clock no later than any op placed after it. A
// renew that never answered, placed before B's read (window end 5),
// renewed the lease until 15 at the latest, so A's write, whose clock
// reads 15 at the earliest, cannot be accepted in that order; placed after
// the read, the renew may have read the clock as late as the old lease
// allows (11), and the write fits. The model alone (an open window) would
// accept both orders.
func TestVerifyLinearizationBoundsAppliedClock(t *testing.T) {
	const hist = `{"format":"leasecheck/history","version":1,"clock_uncertainty":1}
{"process":"A","op":"acquire","ttl":10,"fence":1,"call":0,"return":1,"ok":true}
{"process":"A","op":"renew","ttl":10,"fence":1,"call":2}
{"process":"B","op":"read","call":3,"return":4,"ok":true}
{"process":"A","op":"write","fence":1,"value":"v","call":16,"return":17,"ok":true}
`
	h, err := model.ReadHistory(strings.NewReader(hist), "bound")
	if err != nil {
		t.Fatal(err)
	}
	ko := &Compile(h).Keys[0]
	if err := VerifyLinearization(h, ko, []Placement{{0, false}, {1, true}, {2, false}, {3, false}}); err == nil {
		t.Fatal("accepted a renew placed before B's read that kept the lease live until A's write")
	}
	if err := VerifyLinearization(h, ko, []Placement{{0, false}, {2, false}, {1, true}, {3, false}}); err != nil {
		t.Fatalf("the renew after the read: %v", err)
	}
}
