package checker

import (
	"bytes"
	"context"
	"testing"

	"github.com/leasecheck/leasecheck/model"
)

// TestWriteHTMLDeterministic: the same history gives the same porcupine
// page, byte for byte, every time it is written. This history's key has
// several partial linearizations; porcupine gathers them through a map, so
// unsorted, their order on the page changed from one writing to the next.
func TestWriteHTMLDeterministic(t *testing.T) {
	h, err := model.ReadHistoryFile("testdata/pages/several-partial-linearizations.history.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Check(context.Background(), h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Violated() {
		t.Fatal("the history violates nothing: it no longer has the partial linearizations this test needs")
	}
	var first []byte
	for i := range 20 {
		var b bytes.Buffer
		if err := WriteHTML(&b, h, r); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = b.Bytes()
			continue
		}
		if !bytes.Equal(b.Bytes(), first) {
			t.Fatalf("page %d differs from the first", i+1)
		}
	}
}
