package selfrenew_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"example.com/leasecheck-examples/selfrenew"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/leasetest"
)

// Each owner's library runs in a process of its own: the test binary
// re-executed, the client named by these registrations (in a client
// process, RegisterClient serves and exits here).
func init() {
	for name, bugs := range clients {
		leasetest.RegisterClient(name, func(ctx context.Context, s leasetest.Service) (backend.Backend, error) {
			return selfrenew.AdapterOver(s.Backend, bugs), nil
		})
	}
}

var clients = map[string]selfrenew.Bugs{
	"selfrenew":        {},
	"selfrenew-silent": {SilentLossDelay: 5 * time.Second},
	"selfrenew-loop":   {RenewOnReply: true},
}

// service is the reference coordinator the client processes reach over
// their pipes.
func service() (backend.Backend, func(), error) {
	s := selfrenew.NewService()
	return s, func() { s.Close() }, nil
}

// inProcess is the library in the test's own process, bugs planted.
func inProcess(bugs selfrenew.Bugs) leasetest.Factory {
	return func() (backend.Backend, func(), error) {
		a := selfrenew.AdapterOver(selfrenew.NewService(), bugs)
		return a, func() { a.Close() }, nil
	}
}

func lossSignalOnly() []string {
	var skip []string
	for _, p := range leasetest.Properties() {
		if p != "LossSignal" {
			skip = append(skip, p)
		}
	}
	return skip
}

// procTTL is the TTL of the properties run in processes: a request
// crosses two pipes and a process may wait for a CPU on a shared machine,
// so its requests get a third of a second (the in-process tests' TTL is
// 300ms).
const procTTL = time.Second

func lossSignal(t *testing.T, f leasetest.Factory) *leasetest.Result {
	t.Helper()
	rs := leasetest.Evaluate(context.Background(), f, leasetest.Options{Info: selfrenew.Info(procTTL), TTL: procTTL, Skip: lossSignalOnly()})
	if len(rs) != 1 || rs[0].Skipped != "" {
		t.Fatalf("LossSignal did not run: %+v", rs)
	}
	return rs[0]
}

// The whole suite with every owner's library in a process of its own:
// its pauses are SIGSTOP, LossSignal judges a pause and a partition, and
// nothing fails.
//
// A request to a process crosses two pipes, and the suite starts some
// forty processes at once on a machine that may be shared: its TTL is 2s
// (requests time out after a third of it), where the in-process suite's is
// 300ms.
func TestLeasetestInProcesses(t *testing.T) {
	const ttl = 2 * time.Second
	leasetest.Run(t, leasetest.Processes("selfrenew", service), leasetest.Options{Info: selfrenew.Info(ttl), TTL: ttl})
}

// A library that signals a loss 5 s late when it found it by the service's
// silence — a partition, not a pause — passed LossSignal when its clients
// ran in the test's process (a pause ends in a refusal, which it signals
// at once); with its clients in processes LossSignal cuts A's connection
// while A runs, and the late signal is caught, on the server's record,
// with no stop excused. (Its pause round may catch it too: when SIGSTOP
// freezes A with a renewal in flight, the library times that renewal out
// at resume — silence — and signals 5 s late.)
func TestLateLossSignalUnderPartition(t *testing.T) {
	bugs := clients["selfrenew-silent"]
	t.Run("in-process: a pause alone does not show it", func(t *testing.T) {
		r := lossSignal(t, inProcess(bugs))
		if r.Failed() {
			t.Fatalf("in-process, the silent late signal was caught; this test no longer shows what the processes add:\n%s", r.Report())
		}
		if !strings.Contains(r.Report(), "under a partition not judged") {
			t.Errorf("the report does not say the partition was not judged:\n%s", r.Report())
		}
	})
	t.Run("processes: caught under a partition", func(t *testing.T) {
		r := lossSignal(t, leasetest.Processes("selfrenew-silent", service))
		report := r.Report()
		if !r.Failed() {
			t.Fatalf("the silent late signal passed:\n%s", report)
		}
		for _, w := range []string{
			leasetest.LossSignalProperty + ": A's library said the lock was lost",
			"more than the declared LossLateness",
			"under a partition, A's lock was lost on the server",
			"A's process ran throughout: the kernel reported no stop after the loss",
			"exclusive-belief: A and B both believed, with A running",
		} {
			if !strings.Contains(report, w) {
				t.Errorf("report does not say %q:\n%s", w, report)
			}
		}
	})
}

// The library as written holds in both rounds with its clients in
// processes; the pause is the kernel's SIGSTOP, and its record is what the
// judge excused.
func TestLossSignalInProcesses(t *testing.T) {
	r := lossSignal(t, leasetest.Processes("selfrenew", service))
	report := r.Report()
	if r.Failed() {
		t.Fatalf("the library as written failed:\n%s", report)
	}
	t.Log(report)
	for _, w := range []string{
		leasetest.LossSignalProperty + " holds (pause)",
		"the kernel reported A's process stopped",
		leasetest.LossSignalProperty + " holds (partition)",
		leasetest.RenewRateProperty + " holds",
	} {
		if !strings.Contains(report, w) {
			t.Errorf("report does not say %q:\n%s", w, report)
		}
	}
}

// A library that renews on every reply instead of every half TTL is
// reported by renew-rate with the rate it measured, under no fault as
// under faults; the library as written is not (TestLossSignalInProcesses).
func TestRenewalLoopCaught(t *testing.T) {
	r := lossSignal(t, leasetest.Processes("selfrenew-loop", service))
	report := r.Report()
	if !r.Failed() {
		t.Fatalf("the renewal loop passed:\n%s", report)
	}
	t.Log(report)
	for _, w := range []string{leasetest.RenewRateProperty + ": A's library sent", "renewals within one TTL", "a renewal loop that does not wait its interval", "requests to the service in all"} {
		if !strings.Contains(report, w) {
			t.Errorf("report does not say %q:\n%s", w, report)
		}
	}
}
