package classbench

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/leasecheck/leasecheck/internal/classgen"
	"github.com/leasecheck/leasecheck/model"
)

// The regression rule's numbers. A cell of this tree's checker may take
// at most Factor times the best release's time on it (measured in the same
// run, on the same machine, each the best of the runs made), plus Slack
// for the scheduling noise of a shared machine at the scale of a few
// milliseconds. Factor 2 fails every regression the class found (Unknown,
// or 10-500x) and the deliberately slowed checker (about 11x); this tree's
// fast paths (the greedy witness, the projections) keep each sample cell
// near its replay floor, so a noisy run still has room.
const (
	Factor = 2.0
	Slack  = 10 * time.Millisecond
)

// properties in the order the checker reports them.
var properties = []string{"linearizable", "single-writer-per-fence", "fence-monotonic", "stop-on-renew-failure"}

// CellResult is one cell measured by every column.
type CellResult struct {
	Cell    classgen.Params
	Planted bool // the plant found a place (false: the cell is correct)
	Ops     int
	FloorNS int64
	Columns []Column
}

// Column is one program's measurement of a cell.
type Column struct {
	Name string
	Measurement
}

// Config says what to run.
type Config struct {
	Now       Program
	Releases  []Program
	Porcupine bool          // time plain porcupine (Now's -mode porcupine)
	Budget    time.Duration // each checker's time budget on a cell, at least 4 replay floors
	Reps      int           // runs per program; the fastest counts
	Dir       string        // where the history files go
}

// RunCell generates the cell's history and times every column on it.
func RunCell(cfg Config, cell classgen.Params) (CellResult, error) {
	h, planted := cell.History()
	res := CellResult{Cell: cell, Planted: planted, Ops: len(h.Ops)}
	file := filepath.Join(cfg.Dir, "cell.jsonl")
	f, err := os.Create(file)
	if err != nil {
		return res, err
	}
	if err := model.WriteHistory(f, h); err != nil {
		f.Close()
		return res, err
	}
	if err := f.Close(); err != nil {
		return res, err
	}
	h = nil // the programs read the file
	// The columns take turns, run after run, so that a machine whose load
	// changes meanwhile weighs on every column alike; the fastest run of
	// each counts.
	type prog struct {
		name, path string
		args       []string
	}
	progs := []prog{{"floor", cfg.Now.Path, []string{"-mode", "floor"}}, {"now", cfg.Now.Path, []string{"-mode", "check"}}}
	for _, p := range cfg.Releases {
		progs = append(progs, prog{p.Name, p.Path, nil})
	}
	if cfg.Porcupine {
		progs = append(progs, prog{"porcupine", cfg.Now.Path, []string{"-mode", "porcupine"}})
	}
	best := make([]Measurement, len(progs))
	budget := cfg.Budget
	for i := range max(cfg.Reps, 1) {
		for j, p := range progs {
			if i == 0 && j == 1 {
				// A checker's budget is never under 4 replays of the file:
				// a 10^6-op history takes seconds only to read.
				budget = max(cfg.Budget, 4*time.Duration(best[0].NS))
			}
			m := Run(p.path, budget, file, p.args...)
			if i == 0 || m.Err == "" && (best[j].Err != "" || m.NS < best[j].NS) {
				best[j] = m
			}
		}
	}
	if best[0].Err != "" {
		return res, fmt.Errorf("%s: the replay floor: %s", cell.Name(), best[0].Err)
	}
	res.FloorNS = max(best[0].NS, 1)
	for j, p := range progs[1:] {
		res.Columns = append(res.Columns, Column{p.name, best[j+1]})
	}
	return res, nil
}

// want is what a cell's verdict must be: a correct history holds every
// property; a planted one violates the property planted.
func (r *CellResult) want() (property, verdict string) {
	if !r.Planted || r.Cell.Plant == classgen.Correct {
		return "", "holds"
	}
	return r.Cell.Plant.Property(), "violated"
}

// right reports whether m's verdict is the cell's: every property holds
// (correct), or the planted one is violated.
func (r *CellResult) right(m *Measurement) bool {
	if m.Err != "" {
		return false
	}
	prop, verdict := r.want()
	if prop == "" {
		for _, p := range properties {
			if m.Verdicts[p] != "holds" {
				return false
			}
		}
		return true
	}
	return m.Verdicts[prop] == verdict
}

// decided reports whether m decided linearizability.
func decided(m *Measurement) bool {
	v := m.Verdicts["linearizable"]
	return m.Err == "" && (v == "holds" || v == "violated")
}

// Judge applies the regression rules to measured cells and returns what
// broke them, one line each:
//   - this tree's checker must give the cell's verdict (every property
//     holds on a correct history; the planted property is violated);
//   - it must decide linearizability wherever a release did;
//   - it may take at most Factor times (plus Slack) the best time of a
//     release that gave the cell's verdict.
func Judge(results []CellResult) []string {
	var bad []string
	for i := range results {
		r := &results[i]
		now := &r.Columns[0].Measurement
		name := r.Cell.Name()
		if !r.right(now) {
			bad = append(bad, fmt.Sprintf("%s: now %s, want %s", name, Summary(now), wantText(r)))
		}
		var bestName string
		var bestNS int64 = -1
		for _, c := range r.Columns[1:] {
			if c.Name == "porcupine" {
				continue
			}
			if decided(&c.Measurement) && !decided(now) {
				bad = append(bad, fmt.Sprintf("%s: now leaves linearizable %s where %s decided it (%s)", name, now.Verdicts["linearizable"], c.Name, Summary(&c.Measurement)))
			}
			if r.right(&c.Measurement) && (bestNS < 0 || c.NS < bestNS) {
				bestName, bestNS = c.Name, c.NS
			}
		}
		if bestNS >= 0 && now.Err == "" && float64(now.NS) > Factor*float64(bestNS)+float64(Slack.Nanoseconds()) {
			bad = append(bad, fmt.Sprintf("%s: now takes %.2fx the replay floor, more than %gx %s's %.2fx (+%v)",
				name, ratio(now.NS, r.FloorNS), Factor, bestName, ratio(bestNS, r.FloorNS), Slack))
		}
	}
	return bad
}

func wantText(r *CellResult) string {
	prop, verdict := r.want()
	if prop == "" {
		return "every property holds"
	}
	return prop + " " + verdict
}

func ratio(ns, floor int64) float64 { return float64(ns) / float64(floor) }

// Summary is a measurement's verdict in a few words: "holds", "violated:
// linearizable, fence-monotonic", "unknown", or the error.
func Summary(m *Measurement) string {
	if m.Err != "" {
		return "error: " + m.Err
	}
	var violated []string
	unknown := false
	for _, p := range properties {
		switch m.Verdicts[p] {
		case "violated":
			violated = append(violated, short(p))
		case "unknown":
			unknown = true
		}
	}
	switch {
	case len(violated) > 0 && unknown:
		return "violated: " + strings.Join(violated, ",") + "; lin unknown"
	case len(violated) > 0:
		return "violated: " + strings.Join(violated, ",")
	case unknown:
		return "unknown"
	}
	if len(m.Verdicts) == 1 { // porcupine: linearizability only
		return m.Verdicts["linearizable"]
	}
	return "holds"
}

func short(p string) string {
	return map[string]string{"linearizable": "lin", "single-writer-per-fence": "swpf", "fence-monotonic": "fm", "stop-on-renew-failure": "sorf"}[p]
}

// WriteTable writes the results as a Markdown table: per cell its ops and
// floor, then per column its verdict, time as a ratio to the floor and
// peak memory.
func WriteTable(w io.Writer, results []CellResult) {
	if len(results) == 0 {
		return
	}
	fmt.Fprint(w, "| cell | ops | floor |")
	for _, c := range results[0].Columns {
		fmt.Fprintf(w, " %s |", c.Name)
	}
	fmt.Fprint(w, "\n|---|---:|---:|")
	for range results[0].Columns {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	for i := range results {
		WriteRow(w, &results[i])
	}
}

// WriteRow writes one cell's row of the table.
func WriteRow(w io.Writer, r *CellResult) {
	fmt.Fprintf(w, "| %s | %d | %.1f ms |", r.Cell.Name(), r.Ops, float64(r.FloorNS)/1e6)
	for _, c := range r.Columns {
		if c.Err != "" {
			fmt.Fprintf(w, " error |")
			continue
		}
		fmt.Fprintf(w, " %s, %.2fx, %d MiB |", Summary(&c.Measurement), ratio(c.NS, r.FloorNS), c.PeakKB/1024)
	}
	fmt.Fprintln(w)
}

// Worst names, per column, the cell with the highest time ratio among
// those it got right, and the cells it got wrong or left undecided.
func Worst(results []CellResult) []string {
	if len(results) == 0 {
		return nil
	}
	var out []string
	for j, c := range results[0].Columns {
		worst, worstRatio := "", 0.0
		var wrong []string
		for i := range results {
			r := &results[i]
			m := &r.Columns[j].Measurement
			if c.Name == "porcupine" {
				if !decided(m) {
					wrong = append(wrong, r.Cell.Name())
				}
			} else if !r.right(m) {
				wrong = append(wrong, r.Cell.Name())
				continue
			}
			if x := ratio(m.NS, r.FloorNS); decided(m) && x > worstRatio {
				worst, worstRatio = r.Cell.Name(), x
			}
		}
		sort.Strings(wrong)
		line := fmt.Sprintf("%s: slowest decided cell %s at %.2fx the floor", c.Name, worst, worstRatio)
		if len(wrong) > 0 {
			line += fmt.Sprintf("; %d cells not right or undecided: %s", len(wrong), strings.Join(slices.Compact(wrong), "; "))
		}
		out = append(out, line)
	}
	return out
}
