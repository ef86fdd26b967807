// Package classbench is the benchmark matrix of the class (docs/design.md
// §10, docs/benchmarks.md) and the regression check CI runs over a sample of it.
//
// Each cell is a history drawn by internal/classgen. Every checker is
// timed the same way: a small program (classrun, or the same program
// written into a tagged release's source tree) reads the history file,
// checks it and reports the time that took, measured inside the process,
// and its peak resident memory is read from the operating system. The
// columns: this tree's checker, each tagged release's (its source taken by
// `git archive` of the tag, or of the commit when a clone lacks the tag),
// and plain porcupine with the set-of-states lease model of
// internal/timed. Times are given as ratios to the linear replay floor
// (ReplayFloor) of the same file, measured in the same run.
//
// Index:
//   - cells.go: the matrix, the rows, the CI sample.
//   - floor.go: ReplayFloor.
//   - runner.go: building the programs, running a cell.
//   - judge.go: the regression rules and the table.
//   - classrun: the program for this tree (check, porcupine, floor).
//   - classmatrix: the command `make bench-matrix` runs.
package classbench
