package classgen

import (
	"bytes"
	"testing"

	"github.com/leasecheck/leasecheck/model"
)

// grid is a small sample of every axis.
func grid() []Params {
	var ps []Params
	for _, interval := range []bool{false, true} {
		for _, u := range []int64{0, 100, 1000} {
			for _, sem := range []model.Semantics{model.Seed, model.FencedStorage} {
				for _, fl := range []bool{false, true} {
					ps = append(ps, Params{Ops: 1500, Keys: 1 + int(u%7), Procs: 2 + int(u%5), Unanswered: 0.1,
						Interval: interval, Uncertainty: u, Semantics: sem, FenceLess: fl, NoRetry: u == 100, Seed: uint64(u + 1)})
				}
			}
		}
	}
	return ps
}

// Every history of the class is valid, survives the file format unchanged,
// and is the same for the same parameters.
func TestHistoriesAreValidAndDeterministic(t *testing.T) {
	for _, p := range grid() {
		for _, plant := range Plants() {
			p.Plant = plant
			h, _ := p.History()
			if err := model.Validate(h); err != nil {
				t.Fatalf("%s: %v", p.Name(), err)
			}
			var a, b bytes.Buffer
			if err := model.WriteHistory(&a, h); err != nil {
				t.Fatal(err)
			}
			back, err := model.ReadHistory(bytes.NewReader(a.Bytes()), p.Name())
			if err != nil {
				t.Fatalf("%s: reading it back: %v", p.Name(), err)
			}
			if len(back.Ops) != len(h.Ops) {
				t.Fatalf("%s: %d ops read back, %d written", p.Name(), len(back.Ops), len(h.Ops))
			}
			h2, _ := p.History()
			if err := model.WriteHistory(&b, h2); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Fatalf("%s: two runs made different bytes", p.Name())
			}
		}
	}
}

// The axes are real: the unanswered fraction is about what was asked, exact
// mode records at, interval mode none, fence-less histories carry no fence,
// and each plant finds a place (and changes the history) in most draws.
func TestAxesShapeTheHistory(t *testing.T) {
	placed := map[Plant]int{}
	for _, p := range grid() {
		h, _ := p.History()
		unans, at, fenced := 0, 0, 0
		for _, op := range h.Ops {
			if !op.Returned {
				unans++
			}
			if op.HasAt {
				at++
			}
			if op.Fence != 0 {
				fenced++
			}
		}
		if f := float64(unans) / float64(len(h.Ops)); f < 0.05 || f > 0.15 {
			t.Errorf("%s: %.3f unanswered, want about 0.1", p.Name(), f)
		}
		if p.Interval != (at == 0) {
			t.Errorf("%s: %d ops with at", p.Name(), at)
		}
		if p.FenceLess != (fenced == 0) {
			t.Errorf("%s: %d ops with a fence", p.Name(), fenced)
		}
		for _, plant := range Plants()[1:] {
			p.Plant = plant
			b, ok := p.History()
			if !ok {
				continue
			}
			placed[plant]++
			if len(b.Ops) == len(h.Ops) && equalOps(b.Ops, h.Ops) {
				t.Errorf("%s: the plant changed nothing", p.Name())
			}
		}
	}
	for _, plant := range Plants()[1:] {
		want := len(grid()) * 3 / 4
		if plant == PlantFenceMonotonic {
			want = len(grid()) / 3 // not in fence-less histories
		}
		if placed[plant] < want {
			t.Errorf("%s found a place in %d of %d histories", plant, placed[plant], len(grid()))
		}
	}
}

func equalOps(a, b []model.Op) bool {
	for i := range a {
		x, y := a[i], b[i]
		x.Line, y.Line = 0, 0
		if x != y {
			return false
		}
	}
	return true
}
