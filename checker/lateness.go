package checker

import (
	"fmt"
	"os"
	"strings"

	"github.com/leasecheck/leasecheck/internal/timed"
	"github.com/leasecheck/leasecheck/internal/timefmt"
	"github.com/leasecheck/leasecheck/model"
)

// Expiry lateness (docs/specification.md §3, the header's expiry_lateness). A
// coordinator that frees expired leases late — etcd's lessor revokes them
// through raft, on a sweep every 500 ms — keeps answering "held" for a
// while after a lease's expiry. That never gives two holders, so it is not
// what linearizable reports: a key the search refutes under the declared
// lateness is searched again with no bound on it. If that explains the key,
// the only thing wrong is an answer "still live" later than declared, and
// the key's violation is reported as expiry-lateness instead; if not, as
// linearizable. A grant to another owner always needs the expiry, in both
// searches, so mutual exclusion is judged strictly either way.
//
// Only a history that declares some lateness gets the second search: one
// that declares none (the default) says its coordinator frees a lease at
// its expiry, and an answer "still live" after it is a linearizability
// violation, as it always was.

// unboundedLateness is the header of the second search: a lease may be
// answered live any time after its expiry until it is granted again.
func unboundedLateness(h model.Header) model.Header {
	h.ExpiryLateness = timed.Inf
	return h
}

// lateVerdict is a refuted key's second search.
type lateVerdict struct {
	verdict Verdict // Holds: lateness alone; Violated: not only; Unknown: not known
	reason  string  // Unknown: why
	// violation: Violated, the refutation with lateness out of the way,
	// which names what is wrong besides (two holders, say).
	violation *Violation
}

// lateInMemory searches again, with unbounded lateness, every key the first
// search refuted; nil when none was.
func lateInMemory(b *budget, h *model.History, results []keyResult) map[string]lateVerdict {
	if h.Header.ExpiryLateness == 0 || !anyRefuted(results) {
		return nil
	}
	again := *h
	again.Header = unboundedLateness(h.Header)
	c := timed.Compile(&again)
	out := map[string]lateVerdict{}
	for k := range c.Keys {
		if results[k].verdict != Violated || results[k].key != c.Keys[k].Key {
			continue
		}
		r := checkKeyInMemory(b, c, k)
		lv := lateVerdict{verdict: r.verdict, reason: r.reason}
		if r.violation != nil {
			v := annotate(*r.violation, h.Faults, timefmt.Times{Unit: h.Header.TimeUnit})
			lv.violation = &v
		}
		out[r.key] = lv
	}
	return out
}

// lateInStream is lateInMemory for a streamed history: f is read once more.
func lateInStream(b *budget, f *os.File, name string, hdr model.Header, opts Options, first *Result) (map[string]lateVerdict, error) {
	if hdr.ExpiryLateness == 0 {
		return nil, nil
	}
	refuted := map[string]bool{}
	for _, v := range first.Violations {
		if v.Property == Linearizable {
			refuted[v.Key] = true
		}
	}
	if len(refuted) == 0 {
		return nil, nil
	}
	if _, err := f.Seek(0, 0); err != nil {
		return nil, err
	}
	opts.lateness = timed.Inf
	second, _, err := checkStreamOnce(b, f, name, opts)
	if err != nil {
		return nil, err
	}
	out := map[string]lateVerdict{}
	for key := range refuted {
		out[key] = lateVerdict{verdict: Holds}
	}
	for _, v := range second.Violations {
		if v.Property == Linearizable && refuted[v.Key] {
			out[v.Key] = lateVerdict{verdict: Violated, violation: &v}
		}
	}
	if second.Verdict(Linearizable) == Unknown {
		// Which keys the second pass could not decide is not kept: none
		// of the refuted keys it did not refute is known to be late only.
		for key, lv := range out {
			if lv.verdict == Holds {
				out[key] = lateVerdict{verdict: Unknown, reason: second.Reason}
			}
		}
	}
	return out, nil
}

func anyRefuted(results []keyResult) bool {
	for i := range results {
		if results[i].verdict == Violated {
			return true
		}
	}
	return false
}

// reclassify moves, in r, the linearizable violations of the keys that late
// explains to expiry-lateness, and sets both verdicts.
func reclassify(r *Result, late map[string]lateVerdict, declared int64, unit string) {
	if late == nil {
		return
	}
	lin, exp := Holds, Holds
	reason := ""
	var linV, expV []Violation
	for _, v := range r.Violations {
		if v.Property != Linearizable {
			continue
		}
		lv, ok := late[v.Key]
		switch {
		case ok && lv.verdict == Holds:
			v.Property = ExpiryLateness
			v.Explanation = lateExplanation(v.Explanation, declared, unit)
			expV = append(expV, v)
			exp = Violated
		default:
			if ok && lv.violation != nil {
				v = *lv.violation
			}
			linV = append(linV, v)
			lin = Violated
			if ok && lv.verdict == Unknown && exp == Holds {
				exp, reason = Unknown, lv.reason
			}
		}
	}
	// A linearizable Unknown on some key stays Unknown.
	if lin == Holds && r.Verdict(Linearizable) == Unknown {
		lin = Unknown
	}
	var vs []Violation
	for _, name := range Properties() {
		switch name {
		case Linearizable:
			vs = append(vs, linV...)
		case ExpiryLateness:
			vs = append(vs, expV...)
		default:
			for _, v := range r.Violations {
				if v.Property == name {
					vs = append(vs, v)
				}
			}
		}
	}
	r.Violations = vs
	for i := range r.Properties {
		switch r.Properties[i].Name {
		case Linearizable:
			r.Properties[i].Verdict = lin
		case ExpiryLateness:
			r.Properties[i].Verdict = exp
		}
	}
	if exp == Unknown && r.Reason == "" {
		r.Reason = "expiry-lateness: " + reason
	}
}

// lateExplanation turns the refutation under the declared lateness into the
// finding: what was answered late, and that it gave no second holder.
func lateExplanation(refutation string, declared int64, unit string) string {
	bound := "none declared (expiry_lateness 0)"
	if declared > 0 {
		bound = fmt.Sprintf("the declared expiry_lateness of %d %s", declared, unit)
	}
	return fmt.Sprintf("the coordinator answered that a lease was still live later after its expiry than it may (%s); "+
		"once such answers are allowed at any time after expiry, the key is explained, so no one was granted a live lease. %s",
		bound, capitalize(strings.TrimSpace(refutation)))
}

func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
