// Package runrecord is what a run of holders against a coordinator
// records besides its history, as the run properties read it: the trace,
// the holders' belief spans and the nodes' stops, the measurements, the
// fault plan as applied, and the few numbers of the scenario the
// properties' bounds and excuses are made of (Setting). The drivers that
// record such a run — the simulator, vclient — fill it (package sim's
// Record hands a Result over without copying); package runprop judges it.
// It sits in the specification layer so that the judges read no driver's
// types and the drivers import no judge.
package runrecord
