package mutants

import (
	"fmt"
	"math/bits"
	"testing"
)

// TestEachMutantIsOneSwitch: a mutant is one planted-bug switch on the one
// implementation (memstore's coordinator or resource, internal/impl/holder's
// protocol), on the component it names: never a copy of the code.
func TestEachMutantIsOneSwitch(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range All() {
		set := bits.OnesCount32(uint32(m.coord)) + bits.OnesCount32(uint32(m.res)) + bits.OnesCount32(uint32(m.hold))
		if set != 1 {
			t.Errorf("%s: %d bug switches set, want exactly 1", m.Name, set)
		}
		var on string
		switch {
		case m.coord != 0:
			on = Coordinator
		case m.res != 0:
			on = Resource
		case m.hold != 0:
			on = Holder
		}
		if on != m.Component {
			t.Errorf("%s: switch on the %s, but the mutant names the %s", m.Name, on, m.Component)
		}
		key := fmt.Sprint(m.coord, m.res, m.hold)
		if seen[key] {
			t.Errorf("%s: the same switch as another mutant", m.Name)
		}
		seen[key] = true
	}
}
