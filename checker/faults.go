package checker

import (
	"fmt"
	"strings"

	"github.com/leasecheck/leasecheck/model"
)

// Fault records (DESIGN.md §9) never change a verdict; a violation's story
// names those that overlapped it: whose [start, end] meets the span of time
// of the ops it cites. A fault without an end struck at its start and
// lasted, as far as the history says, to the end (a crash nobody restarted,
// a clock step), so it overlaps whatever comes after it.

// maxFaultsNamed bounds the faults one explanation names.
const maxFaultsNamed = 5

func annotate(f found, faults []model.FaultRecord) Violation {
	v := f.Violation
	if len(faults) == 0 || f.from > f.to {
		return v
	}
	var named []string
	more := 0
	for i := range faults {
		fr := &faults[i]
		end := fr.End
		if !fr.HasEnd {
			end = f.to // open: it lasts
		}
		if fr.Start > f.to || end < f.from {
			continue
		}
		if len(named) == maxFaultsNamed {
			more++
			continue
		}
		named = append(named, describeFault(fr))
	}
	if len(named) == 0 {
		return v
	}
	s := " This happened during " + strings.Join(named, ", ")
	if more > 0 {
		s += fmt.Sprintf(" and %d more fault(s)", more)
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
func describeFault(fr *model.FaultRecord) string {
	s := fmt.Sprintf("%s(%s", fr.Kind, fr.Target)
	if fr.Peer != "" {
		s += "↔" + fr.Peer
	}
	s += ")"
	if fr.HasEnd {
		s += fmt.Sprintf(" [%d,%d]", fr.Start, fr.End)
	} else {
		s += fmt.Sprintf(" from t=%d", fr.Start)
	}
	if fr.Partial {
		s += " (partly applied)"
	}
	return s
}
