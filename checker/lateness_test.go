package checker_test

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/model"
)

// The expiry-lateness histories streamed (CheckFile past StreamAbove, which
// reads the file again for the second search) get the verdicts and
// violations the in-memory check gives.
func TestExpiryLatenessStreamedAsInMemory(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(goldenDir, "*lateness*.jsonl"))
	if err != nil || len(paths) < 5 {
		t.Fatalf("want the expiry-lateness golden histories, got %v (%v)", paths, err)
	}
	for _, path := range paths {
		h, err := model.ReadHistoryFile(path)
		if err != nil {
			t.Fatal(err)
		}
		mem, err := checker.Check(context.Background(), h, checker.Options{})
		if err != nil {
			t.Fatal(err)
		}
		streamed, _, err := checker.CheckFile(context.Background(), path, checker.Options{StreamAbove: -1})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(mem.Properties, streamed.Properties) {
			t.Errorf("%s: in memory %v, streamed %v", path, mem.Properties, streamed.Properties)
		}
		var a, b []string
		for _, v := range mem.Violations {
			a = append(a, v.Property+" "+v.Key)
		}
		for _, v := range streamed.Violations {
			b = append(b, v.Property+" "+v.Key)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: violations in memory %v, streamed %v", path, a, b)
		}
	}
}
