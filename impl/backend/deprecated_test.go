package backend_test

import (
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/impl/backend"
)

// An adapter written against the old Info still compiles and means what it
// meant: FencedWrites: true is CheckedWrites. Its false was the zero value,
// so it declares nothing and Check refuses it as it refuses a missing
// Writes; a Writes that contradicts it is refused too.
func TestDeprecatedFencedWrites(t *testing.T) {
	old := backend.Info{Name: "old", Fences: backend.SequentialFences, FencedWrites: true}
	if err := old.Check(); err != nil {
		t.Fatalf("Check(FencedWrites: true) = %v, want nil", err)
	}
	if got := old.DeclaredWrites(); got != backend.CheckedWrites || !old.ChecksWrites() {
		t.Errorf("FencedWrites: true declares %v (checks %v), want checked", got, old.ChecksWrites())
	}

	unset := backend.Info{Name: "old", Fences: backend.NoFences, FencedWrites: false}
	if err := unset.Check(); err == nil || !strings.Contains(err.Error(), "Writes is not declared") {
		t.Errorf("Check(FencedWrites: false) = %v, want Writes not declared", err)
	}
	if unset.ChecksWrites() {
		t.Error("FencedWrites: false checks writes")
	}

	both := backend.Info{Name: "both", Fences: backend.NoFences, Writes: backend.UncheckedWrites, FencedWrites: true}
	if err := both.Check(); err == nil || !strings.Contains(err.Error(), "FencedWrites is true") {
		t.Errorf("Check(Writes unchecked, FencedWrites true) = %v, want the contradiction refused", err)
	}

	// The new spelling alone is untouched.
	for _, w := range []backend.Writes{backend.CheckedWrites, backend.UncheckedWrites} {
		i := backend.Info{Name: "new", Fences: backend.NoFences, Writes: w}
		if err := i.Check(); err != nil || i.DeclaredWrites() != w || i.ChecksWrites() != (w == backend.CheckedWrites) {
			t.Errorf("Writes %v: Check %v, declared %v, checks %v", w, err, i.DeclaredWrites(), i.ChecksWrites())
		}
	}
}
