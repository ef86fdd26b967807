package backend

import (
	"context"
	"sync"
	"time"

	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// InProcess adapts a Clocked coordinator to Backend: calls are serialized by
// a mutex, now is the time since epoch in unit (e.g. time.Millisecond) read
// from clock, and every Response carries At = epoch + now·unit exactly. A nil
// clock means time.Now. Refusal reasons are machine.ClockedCoordinator's.
func InProcess(c machine.Clocked, unit time.Duration, clock func() time.Time) Backend {
	return InProcessCoordinator(machine.ClockedCoordinator(c), unit, clock)
}

// InProcessCoordinator is InProcess for any machine.Coordinator: the
// simulator's coordinator machines run against the real clock.
func InProcessCoordinator(c machine.Coordinator, unit time.Duration, clock func() time.Time) Backend {
	if clock == nil {
		clock = time.Now
	}
	if unit <= 0 {
		unit = time.Millisecond
	}
	return &inProcess{c: c, unit: unit, clock: clock, epoch: clock()}
}

// InProcessInfo is the Info of an InProcess backend named name.
func InProcessInfo(name string) Info {
	return Info{Name: name, Fences: SequentialFences, Writes: CheckedWrites, ServerTime: true,
		FenceSource: "the coordinator's counter", FencedWrite: "the coordinator's write: holder, deadline and fence checked"}
}

type inProcess struct {
	mu    sync.Mutex
	c     machine.Coordinator
	unit  time.Duration
	clock func() time.Time
	epoch time.Time
	id    uint64
}

func (p *inProcess) ServerNow(context.Context) (time.Time, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.now(), nil
}

// now truncates the clock to the unit, so that At is exactly the now the
// coordinator saw.
func (p *inProcess) now() time.Time {
	d := p.clock().Sub(p.epoch) / p.unit * p.unit
	return p.epoch.Add(d)
}

func (p *inProcess) Do(ctx context.Context, req Request) (Response, error) {
	if err := ctx.Err(); err != nil {
		return Response{}, err
	}
	switch req.Kind {
	case model.Acquire, model.Renew, model.Release, model.Write, model.Read:
	default:
		return Response{}, &unknownOpError{Kind: req.Kind}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	at := p.now()
	p.id++
	rep := p.c.Apply(&machine.Request{ID: p.id, Kind: req.Kind, Key: req.Key, Owner: req.Owner,
		TTL: int64((req.TTL + p.unit - 1) / p.unit), Fence: req.Fence, Value: req.Value}, int64(at.Sub(p.epoch)/p.unit))
	return Response{OK: rep.OK, Reason: rep.Err, Fence: rep.Fence, TTL: time.Duration(rep.TTL) * p.unit, Value: rep.Value, HasValue: rep.HasValue, At: at}, nil
}

func (p *inProcess) Close() error { return nil }

// unknownOpError is InProcess's error for a request whose Kind is not one
// of the five.
type unknownOpError struct{ Kind model.Kind }

func (e *unknownOpError) Error() string { return "backend: unknown op " + e.Kind.String() }
