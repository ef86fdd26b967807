package explore

// BlindMonitor makes o's monitor never flag linearizable: an incomplete
// monitor planted for TestDisagreementIsReported.
func BlindMonitor(o *Options) { o.blindMonitor = true }

// ReuseDistance fixes how far a waiting state may be from the world it is
// re-run from (-1: each keeps its own), whatever the heap.
func ReuseDistance(o *Options, d int) { o.reuse = d }

// NoSpareWorlds makes depth-first search copy every world anew, never
// into one it is done with (sim.World.CloneInto).
func NoSpareWorlds(o *Options) { o.noSpares = true }

// NoCloning makes the search re-run every state from the scenario along
// its path instead of copying worlds, as it does for machines that cannot
// be copied.
func NoCloning(o *Options) { o.noCloning = true }

// SetDefaultJudges sets the judges of a search whose Options name none.
func SetDefaultJudges(j Judges) { defaultJudges = j }
