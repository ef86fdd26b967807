package checker

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

// FuzzCheck is Go native fuzzing of the checker itself through
// rapid.MakeFuzz: the fuzzer's bytes are rapid's draws of a small history
// (genSmall: every mode, ties everywhere, lost answers, half of them with a
// field changed). Its linearizability verdict is compared with porcupine's
// on the same model — never accept what porcupine rejects, and where
// porcupine is exact (no lost answers, no two processes tied at one
// instant) never reject what it accepts — and with the brute force, which
// it must never contradict by raising a false alarm, nor by accepting where
// every op carries at. The streaming path must agree with memory.
// Its seed corpus, inputs the fuzzer found new coverage with, is
// testdata/fuzz/FuzzCheck/ (go test runs each on every run); `make fuzz`
// runs it for $(FUZZTIME), and failing inputs land there too.
func FuzzCheck(f *testing.F) {
	dir := f.TempDir()
	f.Fuzz(rapid.MakeFuzz(func(t *rapid.T) {
		m := smallModes[rapid.IntRange(0, len(smallModes)-1).Draw(t, "mode")]
		o := m.o
		o.mutate = rapid.Bool().Draw(t, "mutate")
		h := genSmall(t, o)
		r := check(h)
		got := r.Verdict(Linearizable)
		if got == Unknown {
			t.Fatalf("a small history undecided: %s\n%s", r.Reason, describeBrute(h))
		}
		brute := bruteLinearizable(h)
		if brute && got != Holds {
			t.Fatalf("false alarm: the brute force explains it, the checker says %s: %+v\n%s", got, r.Violations, describeBrute(h))
		}
		if !brute && got == Holds && allAt(h) {
			t.Fatalf("no order explains it, yet the checker accepts it\n%s", describeBrute(h))
		}
		if wrong, _ := porcupineDisagrees(h, func() Verdict { return got }, 2*time.Second); wrong != "" {
			t.Fatalf("%s\n%s", wrong, describeBrute(h))
		}
		if s := streamed(t, dir, h, Options{Timeout: -1}); s.Verdict(Linearizable) != got && s.Verdict(Linearizable) != Unknown {
			t.Fatalf("streamed: linearizable %s, in memory %s\n%s", s.Verdict(Linearizable), got, describeBrute(h))
		}
	}))
}
