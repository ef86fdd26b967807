package explore

// PCT, probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi,
// Nagarakatte, "A randomized scheduler with probabilistic guarantees of
// finding bugs", ASPLOS 2010), over the world's moves. Each move belongs to
// a chain: the node it runs on (a holder, the coordinator, the resource, a
// client), or the fault plan, or the adversary. A run gives the chains
// random distinct priorities and picks d−1 change points among the first k
// steps; at each step the enabled move of the highest-priority chain runs,
// and at the i-th change point that chain drops below every other. A bug
// that needs d ordering constraints among n chains in a k-step run is then
// found by one run with probability at least 1/(n·k^(d−1)); R runs miss it
// with probability at most (1 − 1/(n·k^(d−1)))^R. Message delays and losses
// (within the deviation budget) are drawn uniformly, so the guarantee is
// about the order of moves given the network's draws.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
)

// randChooser draws the choice points inside a move uniformly.
type randChooser struct {
	r     *rand.Rand
	taken []scenario.Choice
}

func (c *randChooser) Pick(n int, label string) int {
	v := c.r.IntN(n)
	c.taken = append(c.taken, scenario.Choice{Label: label, Value: v})
	return v
}

func (c *randChooser) Int64(lo, hi int64, label string) int64 {
	if hi <= lo {
		return lo
	}
	return lo + int64(c.Pick(int(hi-lo+1), label))
}

func (x *explorer) pct() {
	root, err := x.newWorld(nil, 0)
	if err != nil {
		x.err = err
		return
	}
	chains := x.chains(root)
	n, k, d := chains, x.o.MaxDepth, x.o.Depth
	runs := 0
	defer func() {
		// The guarantee counts the steps of the longest run made (k), not
		// the depth bound: it is the runs' own length that matters.
		kk := max(min(x.rep.MaxDepth, k), 1)
		p := 1 / (float64(n) * math.Pow(float64(kk), float64(d-1)))
		miss := math.Pow(1-p, float64(runs))
		x.rep.Guarantee = fmt.Sprintf("PCT: %d runs, %d chains, runs of at most %d steps, %d priority change points: each run finds a bug of depth <= %d with probability >= 1/(n*k^(d-1)) = %.3g; all %d runs miss it with probability <= %.3g (for the order of moves; delays and losses drawn uniformly)",
			runs, n, kk, d-1, d, p, runs, miss)
		if x.rep.Stopped == "" {
			x.rep.Stopped = "runs"
		}
	}()
	seen := map[uint64]bool{}
	for run := 0; run < x.o.Runs && !x.stop; run++ {
		runs++
		r := rand.New(rand.NewPCG(x.o.Seed, uint64(run)))
		prio := r.Perm(n) // chain -> priority; higher runs first
		for i := range prio {
			prio[i] += d // change points take priorities d-1 .. 1, below all
		}
		changes := make([]int, 0, d-1)
		for len(changes) < d-1 {
			c := 1 + r.IntN(max(k, 1))
			if !slices.Contains(changes, c) {
				changes = append(changes, c)
			}
		}
		w, err := x.newWorld(nil, 0)
		if err != nil {
			x.err = err
			return
		}
		var p *path
		depth := 0
		for !x.stop {
			if x.outOfBudget() {
				return
			}
			ms := w.Moves()
			if len(ms) == 0 || depth >= k {
				x.rep.Paths++
				x.judgeLeaf(w, p, depth)
				break
			}
			best := -1
			for i, m := range ms {
				if best < 0 || prio[x.chainOf(w, m)] > prio[x.chainOf(w, ms[best])] {
					best = i
				}
			}
			// Ties within one chain (its several faults or requests): draw.
			var same []int
			for i, m := range ms {
				if x.chainOf(w, m) == x.chainOf(w, ms[best]) {
					same = append(same, i)
				}
			}
			pick := same[r.IntN(len(same))]
			depth++
			if ci := slices.Index(changes, depth); ci >= 0 {
				prio[x.chainOf(w, ms[pick])] = d - 1 - ci
			}
			var cs []scenario.Choice
			if len(ms) > 1 {
				cs = append(cs, scenario.Choice{Label: "next", Value: pick})
			}
			rc := &randChooser{r: r}
			w.SetChooser(rc)
			w.Do(pick)
			p = newPath(p, append(cs, rc.taken...))
			x.rep.States++
			x.rep.MaxDepth = max(x.rep.MaxDepth, depth)
			if h := w.StateHash(); !seen[h] {
				seen[h] = true
				x.rep.DistinctStates++
			}
			if flags := w.Monitor().(Monitor).Take(w); len(flags) > 0 {
				if x.judgeFlagged(w, flags, p, depth) {
					return
				}
			}
		}
	}
}

// chains counts the chains of the world: its nodes, the plan, the adversary.
func (x *explorer) chains(w *sim.World) int { return w.Nodes() + 2 }

// chainOf is the chain a move belongs to.
func (x *explorer) chainOf(w *sim.World, m sim.Move) int {
	switch m.Kind {
	case sim.MoveFault:
		return w.Nodes()
	case sim.MoveClient:
		return w.Nodes() + 1
	}
	if n := w.MoveNode(m); n >= 0 {
		return int(n)
	}
	return w.Nodes()
}
