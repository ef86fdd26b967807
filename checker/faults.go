package checker

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/leasecheck/leasecheck/internal/timed"
	"github.com/leasecheck/leasecheck/internal/timefmt"
	"github.com/leasecheck/leasecheck/model"
)

// Fault records (docs/design.md §9) never change a verdict; a violation's story
// names those that overlapped it: whose [start, end] meets the span of time
// of the ops it cites. A fault without an end struck at its start and
// lasted, as far as the history says, to the end (a crash nobody restarted,
// a clock step), so it overlaps whatever comes after it.

// maxFaultsNamed bounds the faults one explanation names.
const maxFaultsNamed = 5

func annotate(f found, faults []model.FaultRecord, tf timefmt.Times) Violation {
	v := f.Violation
	if len(faults) == 0 || f.from > f.to {
		return v
	}
	// The overlapping faults, the one most likely to explain the violation
	// first: one that hit a process the violation cites before one that
	// hit another, then the shorter before the longer (a pause before a
	// clock offset active since t=0), then in time order.
	type overlap struct {
		fr     *model.FaultRecord
		cited  bool
		length int64
	}
	var over []overlap
	for i := range faults {
		fr := &faults[i]
		end := fr.End
		if !fr.HasEnd {
			end = f.to // open: it lasts
		}
		if fr.Start > f.to || end < f.from {
			continue
		}
		length := end - fr.Start
		if !fr.HasEnd {
			length = timed.Inf // it lasts to the end of the history
		}
		over = append(over, overlap{fr: fr, cited: slices.Contains(f.procs, fr.Target), length: length})
	}
	if len(over) == 0 {
		return v
	}
	sort.SliceStable(over, func(a, b int) bool {
		if over[a].cited != over[b].cited {
			return over[a].cited
		}
		return over[a].length < over[b].length
	})
	var named []string
	for _, o := range over[:min(len(over), maxFaultsNamed)] {
		named = append(named, describeFault(o.fr, tf))
	}
	s := " This happened during " + strings.Join(named, ", ")
	if more := len(over) - len(named); more == 1 {
		s += " and 1 more fault"
	} else if more > 1 {
		s += fmt.Sprintf(" and %d more faults", more)
	}
	e := strings.TrimRight(v.Explanation, " ")
	if !strings.HasSuffix(e, ".") {
		e += "."
	}
	v.Explanation = e + s + "."
	return v
}

// describeFault renders a fault the way explanations name it:
// pause(h1) [120,380], clock-step(coordinator) at t=200.
func describeFault(fr *model.FaultRecord, tf timefmt.Times) string {
	s := fmt.Sprintf("%s(%s", fr.Kind, fr.Target)
	if fr.Peer != "" {
		s += "↔" + fr.Peer
	}
	s += ")"
	if fr.HasEnd {
		s += " " + tf.Span(fr.Start, fr.End)
	} else {
		s += " from " + tf.At(fr.Start)
	}
	if fr.Partial {
		s += " (partly applied)"
	}
	return s
}
