package realrun

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/recording"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// unit is the history's time unit.
const unit = time.Microsecond

// Recorder times requests to a backend on the monotonic clock and records
// them as a history (docs/specification.md §4): call when the request was sent, return
// when the answer arrived, no return when the outcome is unknown (an error:
// timeout, reset), ok false with the reason for a definite refusal. When the
// backend reports its clock (Info.ServerTime), each op's `at` is the
// server's time mapped onto the client's timeline with the offset measured
// by NewRecorder, and the header's clock_uncertainty covers the error of
// that mapping (docs/specification.md §3). Safe for concurrent use.
type Recorder struct {
	info  backend.Info
	clk   backend.Clock
	start time.Time

	mu  sync.Mutex
	ops []model.Op

	off0, err0 int64 // server − client offset (us) at start, and its error bound

	// For Silence (under mu): when a request last got an answer; whether
	// some client has asked since without an answer, and since when; the
	// last error a request got.
	lastAnswer time.Duration
	asking     bool
	askFrom    time.Duration
	lastErr    string
	// renewerEnd is the return of each renewer process's last renewal
	// (under mu): the next one's call is not before it.
	renewerEnd map[string]int64

	// Set by Finish.
	CalibrationError, Drift time.Duration
}

// NewRecorder starts the timeline. When info.ServerTime, clk must read the
// server's clock; it is sampled to calibrate the offset.
func NewRecorder(ctx context.Context, info backend.Info, clk backend.Clock) (*Recorder, error) {
	r := &Recorder{info: info, clk: clk, start: time.Now()}
	if info.ServerTime {
		if clk == nil {
			return nil, fmt.Errorf("%s: Info.ServerTime is set but the backend has no ServerNow", info.Name)
		}
		var err error
		if r.off0, r.err0, err = r.calibrate(ctx); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Now is the time since the recorder started, on the monotonic clock.
func (r *Recorder) Now() time.Duration { return time.Since(r.start) }

// Since is t on the recorder's timeline (a time another process read, on
// the wall clock, as a child process's renewal carries).
func (r *Recorder) Since(t time.Time) time.Duration { return t.Sub(r.start) }

// GrantTTL rounds d up to the backend's TTL granularity.
func (r *Recorder) GrantTTL(d time.Duration) time.Duration {
	if g := r.info.TTLGranularity; g > 0 {
		d = (d + g - 1) / g * g
	}
	return d
}

// calibrate measures offset = server clock − client timeline from the
// sample with the shortest round trip; its error is at most half of it.
// It takes up to 15 samples in at most 10 s and tolerates failed ones (a
// server stopped or restarting for a moment); it fails only if none answers.
func (r *Recorder) calibrate(ctx context.Context) (off, errBound int64, err error) {
	errBound = -1
	deadline := time.Now().Add(10 * time.Second)
	var lastErr error
	for good, tries := 0, 0; good < 15 && tries < 40 && time.Now().Before(deadline); tries++ {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		t0 := r.Now()
		s, err := r.clk.ServerNow(cctx)
		t1 := r.Now()
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return 0, 0, ctx.Err()
			}
			lastErr = err
			time.Sleep(100 * time.Millisecond)
			continue
		}
		good++
		mid := int64((t0 + (t1-t0)/2) / unit)
		e := int64((t1-t0)/unit)/2 + 1
		if errBound < 0 || e < errBound {
			off, errBound = s.UnixMicro()-mid, e
		}
	}
	if errBound < 0 {
		return 0, 0, fmt.Errorf("%s: reading the server's clock: %w", r.info.Name, lastErr)
	}
	return off, errBound, nil
}

// Do sends req to b with the given timeout and records it under process
// and owner. It returns the response and whether one arrived. drop loses
// the request before it leaves (a dropped renewal): the caller waits out
// its timeout, as for any lost message.
func (r *Recorder) Do(ctx context.Context, b backend.Backend, process, owner string, req backend.Request, timeout time.Duration, drop bool) (backend.Response, bool) {
	if req.Owner == "" {
		req.Owner = owner
	}
	op := model.Op{Process: process, Owner: owner, Key: req.Key, Kind: req.Kind}
	recording.Call(&op, &machine.Request{TTL: int64(r.GrantTTL(req.TTL) / unit), Fence: req.Fence, Value: req.Value})
	octx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	call := r.Now()
	op.Call = int64(call / unit)
	if !drop {
		r.mu.Lock()
		if !r.asking {
			r.asking, r.askFrom = true, call
		}
		r.mu.Unlock()
	}
	var resp backend.Response
	var err error
	if drop {
		<-octx.Done()
		err = octx.Err()
	} else {
		resp, err = b.Do(octx, req)
	}
	ret := r.Now()
	if err != nil {
		// Unknown outcome: recorded without return.
		op.Error = "timeout"
		if !errors.Is(err, context.DeadlineExceeded) {
			op.Error = trimErr(err)
		}
		if !drop {
			r.mu.Lock()
			r.lastErr = op.Error
			if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
				r.lastErr = "no answer before the request timed out"
			}
			if !r.asking {
				// It asked before the last answer (someone else's) and got none.
				r.asking, r.askFrom = true, max(call, r.lastAnswer)
			}
			r.mu.Unlock()
		}
		r.record(op)
		return backend.Response{}, false
	}
	r.mu.Lock()
	r.lastAnswer = max(r.lastAnswer, ret)
	r.asking = false
	r.mu.Unlock()
	recording.Return(&op, int64(ret/unit), &machine.Reply{OK: resp.OK, Err: recording.Refusal(resp.OK, resp.Reason),
		TTL: int64(resp.TTL / unit), Fence: resp.Fence, Value: resp.Value, HasValue: resp.HasValue})
	if !resp.At.IsZero() && r.info.ServerTime {
		op.At, op.HasAt = resp.At.UnixMicro()-r.off0, true
	}
	r.record(op)
	return resp, true
}

// RenewerProcess is the history's process for the background renewals of
// owner's lock (backend.Holding): the library's own goroutine, sequential.
func RenewerProcess(owner string) string { return model.RenewerProcess(owner) }

// RecordRenewal records a renewal a library made by itself
// (backend.Holding's Observe) as a renew of its owner from
// RenewerProcess(owner): the history then knows the lease was extended,
// when and by how much, as it knows of the renewals the runner sends.
//
// A report that is a release of the library's own (Renewal.Release) is
// recorded as a release from the same process, with no TTL.
func (r *Recorder) RecordRenewal(rn backend.Renewal) {
	op := model.Op{Process: RenewerProcess(rn.Owner), Owner: rn.Owner, Key: rn.Key, Kind: model.Renew,
		Call: int64(rn.Start.Sub(r.start) / unit)}
	if rn.Release {
		op.Kind = model.Release
	}
	recording.Call(&op, &machine.Request{TTL: int64(r.GrantTTL(rn.TTL) / unit), Fence: rn.Fence})
	// The library's renewals are sequential, but a call rounded down and a
	// return rounded up to the µs can make the next one start before the
	// last one's return: they touch, never overlap.
	r.mu.Lock()
	op.Call = max(op.Call, r.renewerEnd[op.Process])
	r.mu.Unlock()
	if rn.Answered {
		// A library's renewal says yes or no, never why; its one TTL went
		// with the request.
		recording.Return(&op, max(int64((rn.End.Sub(r.start)+unit-1)/unit), op.Call),
			&machine.Reply{OK: rn.OK, Err: recording.Refusal(rn.OK, "")})
		if !rn.At.IsZero() && r.info.ServerTime {
			op.At, op.HasAt = rn.At.UnixMicro()-r.off0, true
		}
	} else {
		op.Error = "timeout"
		if rn.Release {
			op.Error = "the library let go: the server frees the lock when it sees the release or the session's end, and says nothing"
		}
	}
	r.mu.Lock()
	if r.renewerEnd == nil {
		r.renewerEnd = map[string]int64{}
	}
	if op.Returned {
		r.renewerEnd[op.Process] = op.Return
	} else {
		// Unanswered: the process's next op may start at once; a later
		// renewal of the library's still starts after this one's call.
		r.renewerEnd[op.Process] = op.Call
	}
	r.mu.Unlock()
	r.record(op)
}

// SessionProcess is the history's process of the session of process's
// client, which ends with the client (RecordSessionEnd).
func SessionProcess(process string) string { return process + "/session" }

// RecordSessionEnd records that a crashed client's session lock is freed
// by the server once it sees the client's connection close
// (backend.Info.EndsWithClient): a release of owner's grant (fence) on key,
// from SessionProcess(process), called at the crash (µs on the history's
// timeline) and never answered, for the server reports no time.
func (r *Recorder) RecordSessionEnd(key, process, owner string, fence, at int64) {
	op := model.Op{Process: SessionProcess(process), Owner: owner, Key: key, Kind: model.Release, Call: at}
	recording.Call(&op, &machine.Request{Fence: fence})
	op.Error = "the client's session ends with it: freed when the server sees its connection close"
	r.record(op)
}

// Silence is how long clients have been asking without any of them
// getting an answer — since the first request sent (or left unanswered)
// after the last answer — or -1 when nobody is waiting; and the last error
// a request got. Dropped requests (a fault) are not asking.
func (r *Recorder) Silence() (time.Duration, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.asking {
		return -1, r.lastErr
	}
	return r.Now() - r.askFrom, r.lastErr
}

func (r *Recorder) record(op model.Op) {
	r.mu.Lock()
	r.ops = append(r.ops, op)
	r.mu.Unlock()
}

func trimErr(err error) string {
	s := err.Error()
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}

// Finish re-measures the server's offset and returns the history: ops
// sorted by call (each process's ops keep their order: they are
// sequential), numbered by the line they take in the written file, and the
// header with the clock uncertainty.
func (r *Recorder) Finish(ctx context.Context) (*model.History, error) {
	return r.finish(ctx, false)
}

// FinishPartial is Finish for a run that could not finish (a backend that
// stopped answering): when the server's clock cannot be read again, `at`
// keeps the start's calibration and the offset's movement goes unmeasured
// (Drift stays 0). The history is for looking at, not for judging.
func (r *Recorder) FinishPartial(ctx context.Context) (*model.History, error) {
	return r.finish(ctx, true)
}

func (r *Recorder) finish(ctx context.Context, partial bool) (*model.History, error) {
	r.mu.Lock()
	ops := append([]model.Op(nil), r.ops...)
	r.mu.Unlock()
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Call < ops[j].Call })
	u := int64(r.info.Uncertainty / unit)
	if r.info.ServerTime {
		off1, err1, err := r.calibrate(ctx)
		if err != nil && partial {
			off1, err1, err = r.off0, r.err0, nil
		}
		if err != nil {
			return nil, err
		}
		calErr, drift := max(r.err0, err1), abs(off1-r.off0)
		r.CalibrationError, r.Drift = time.Duration(calErr)*unit, time.Duration(drift)*unit
		// At is mapped with the start offset: its error is the calibration
		// error plus how far the offset moved, plus 1 ms for clock
		// granularity and scheduling.
		need := calErr + drift + 1000
		// The bound must hold for every op (the reader rejects an `at`
		// outside [call-u, return+u]); an excursion beyond the calibration
		// is measured clock error, so it widens u rather than be dropped.
		for i := range ops {
			if !ops[i].HasAt {
				continue
			}
			need = max(need, ops[i].Call-ops[i].At, ops[i].At-ops[i].Return)
		}
		u += need
	}
	h := &model.History{
		Name: r.info.Name,
		Header: model.Header{Version: 1, TimeUnit: "us", ClockUncertainty: u, Semantics: model.Seed,
			Fences: r.info.Fences.Order(), ExpiryLateness: int64(r.info.ExpiryLateness / unit)},
		Ops: ops,
	}
	recording.Finish(h)
	return h, nil
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
