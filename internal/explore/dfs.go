package explore

// Depth-first search: a stack of waiting states, one worker.

import (
	"github.com/leasecheck/leasecheck/internal/sim"
)

// dfs is depth-first search. With a visited set and a depth bound it
// keeps each state's fewest moves so far: a path cut at the bound below a
// state first reached deep would leave the same state's longer futures
// unexplored when it is reached again in fewer moves, and the search would
// still say complete while missing states. A state reached in fewer moves is
// explored again from there (apply), as SPIN's depth-bounded search does.
func (x *explorer) dfs(root *sim.World) {
	x.rep.DistinctStates++
	if !x.o.noSpares {
		x.spare = &spares{}
	}
	x.paths = &pathSlab{}
	// The buffers of the expansions, one set a depth: expansions at one
	// depth come one after another, each done (its children explored)
	// before the next, so the next reuses the buffers its children's
	// worlds and items lay in.
	var bufs []*expandBuf
	var visit func(it *item)
	visit = func(it *item) {
		if x.outOfBudget() {
			return
		}
		if it.entry && int(x.visited.get(it.fp).depth) < int(it.depth) {
			x.spare.put(it.world())
			return // reached in fewer moves since, and explored from there (apply)
		}
		sleep := x.claim(it)
		it.kids = kidsOwn // depth-first keeps only a path's worth of worlds
		for len(bufs) <= int(it.depth) {
			bufs = append(bufs, &expandBuf{})
		}
		buf := bufs[it.depth]
		cands := x.expandPure(it, sleep, buf)
		kids := buf.kids[:0]
		x.apply(it, cands, func(c item) { kids = append(kids, c) })
		buf.kids = kids
		if x.stop {
			return // a counterexample's or an error's worlds are left alone
		}
		// The worlds this expansion is done with: this state's, unless its
		// last move ran on it, and the children's that were not kept.
		x.spare.put(it.world())
		for i := range cands {
			x.spare.put(cands[i].world())
		}
		for i := range kids {
			x.spare.keep(kids[i].world())
		}
		x.spare.flush()
		for i := range kids {
			visit(&kids[i])
			if x.stop {
				return
			}
		}
	}
	it := x.rootItem(root)
	visit(&it)
}
