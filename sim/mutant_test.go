package sim_test

import (
	"context"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/holder"
	"github.com/leasecheck/leasecheck/impl/memstore"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/scenario"
	"github.com/leasecheck/leasecheck/sim"
)

// greedyCoordinator grants every acquire, live lease or not: the classic
// "two holders" bug. It shows the mutant hook and that the checker sees
// what the simulator records.
type greedyCoordinator struct{ sim.RefCoordinator }

func (c *greedyCoordinator) Apply(r *holder.Request, now int64) holder.Reply {
	if r.Kind == model.Acquire {
		if owner, _, held := c.S.Holder(r.Key); held {
			c.S.Release(r.Key, owner, 0)
		}
	}
	return c.RefCoordinator.Apply(r, now)
}

// anyFenceResource accepts every write, whatever its fence.
type anyFenceResource struct{ r *memstore.Resource }

func (a *anyFenceResource) Apply(q *holder.Request) holder.Reply {
	if q.Kind == model.Write {
		a.r.Write(q.Key, a.r.Highest(q.Key), q.Value)
		return holder.Reply{ID: q.ID, OK: true}
	}
	return (&sim.RefResource{R: a.r}).Apply(q)
}

// wallCoordinator measures leases on its wall clock, which clock-step
// faults move: the article's third failure mode.
type wallCoordinator struct {
	sim.RefCoordinator
	wall int64
}

func (c *wallCoordinator) SetWall(w int64) { c.wall = w }

func (c *wallCoordinator) Apply(r *holder.Request, now int64) holder.Reply {
	return c.RefCoordinator.Apply(r, c.wall)
}

func TestMutantsAreCaught(t *testing.T) {
	cases := []struct {
		name string
		opts *sim.Options
		sem  string
	}{
		{"greedy-coordinator", &sim.Options{NewCoordinator: func() sim.Coordinator {
			return &greedyCoordinator{sim.RefCoordinator{S: memstore.New()}}
		}}, "seed"},
		{"wall-clock-coordinator", &sim.Options{NewCoordinator: func() sim.Coordinator {
			return &wallCoordinator{RefCoordinator: sim.RefCoordinator{S: memstore.New()}}
		}}, "seed"},
		{"any-fence-resource", &sim.Options{NewResource: func() sim.Resource {
			return &anyFenceResource{memstore.NewResource()}
		}}, "fenced-storage"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			caught := map[string]int{}
			for seed := uint64(1); seed <= 150 && len(caught) == 0; seed++ {
				sc := scenario.FromSeed(seed, scenario.Options{Kinds: faults.AllKinds})
				sc.Semantics = tc.sem
				r, err := sim.Run(sc, tc.opts)
				if err != nil {
					t.Fatal(err)
				}
				res := checker.Check(context.Background(), r.History, checker.Options{Workers: 1, Timeout: 5 * time.Second})
				for _, v := range res.Violations {
					caught[v.Property]++
				}
			}
			if len(caught) == 0 {
				t.Fatalf("%s: no violation in 150 seeds; the simulator or checker lost its teeth", tc.name)
			}
			t.Logf("%s caught: %v", tc.name, caught)
		})
	}
}
