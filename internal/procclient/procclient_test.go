package procclient

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/impl/memstore"
	"github.com/leasecheck/leasecheck/model"
)

// The test binary is its own client process: this client is the parent's
// service as the child reaches it over the pipe, with a goroutine that
// counts to show the child runs.
func TestMain(m *testing.M) {
	Register("passthrough", func(ctx context.Context, s Service) (backend.Backend, error) {
		if s.Backend == nil {
			return nil, os.ErrInvalid
		}
		return s.Backend, nil
	})
	os.Exit(m.Run())
}

func start(t *testing.T, svc backend.Backend) *Client {
	t.Helper()
	c, err := Start(context.Background(), Spec{Name: "passthrough", Service: svc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// A request goes to the child and the child's request to the parent's
// service; the parent counts it.
func TestDoThroughChild(t *testing.T) {
	svc := backend.InProcess(memstore.New(), time.Millisecond, nil)
	c := start(t, svc)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := c.Do(ctx, backend.Request{Kind: model.Acquire, Key: "k", Owner: "A", TTL: time.Second})
	if err != nil || !r.OK || r.Fence < 1 {
		t.Fatalf("acquire through the child = %+v, %v", r, err)
	}
	if n := c.Sent().Service[model.Acquire]; n != 1 {
		t.Errorf("the parent counted %d acquires from the child, want 1", n)
	}
}

// A stopped child answers nothing until it is resumed, and the kernel's
// record of the stop brackets the stop.
func TestStopIsTheKernels(t *testing.T) {
	svc := backend.InProcess(memstore.New(), time.Millisecond, nil)
	c := start(t, svc)
	before := time.Now()
	resume := c.StopClient("A")
	stopped := c.Stops()
	if len(stopped) != 1 || !stopped[0].Open || stopped[0].From.Before(before) {
		t.Fatalf("after StopClient the kernel's record is %+v, want one open stop after %v", stopped, before)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err := c.Do(ctx, backend.Request{Kind: model.Acquire, Key: "k", Owner: "A", TTL: time.Second})
	cancel()
	if err == nil {
		t.Fatal("a stopped child answered")
	}
	resume()
	spans := c.Stops()
	if len(spans) != 1 || spans[0].Open || !spans[0].To.After(spans[0].From) {
		t.Fatalf("after resume the kernel's record is %+v, want one closed stop", spans)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if r, err := c.Do(ctx, backend.Request{Kind: model.Acquire, Key: "k2", Owner: "A", TTL: time.Second}); err != nil || !r.OK {
		t.Fatalf("after resume: %+v, %v", r, err)
	}
}

// A partitioned child's requests get no answer; restored, they do.
func TestPartition(t *testing.T) {
	svc := backend.InProcess(memstore.New(), time.Millisecond, nil)
	c := start(t, svc)
	c.Partition(true)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err := c.Do(ctx, backend.Request{Kind: model.Acquire, Key: "k", Owner: "A", TTL: time.Second})
	cancel()
	if err == nil {
		t.Fatal("a partitioned child's request was answered")
	}
	c.Partition(false)
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if r, err := c.Do(ctx, backend.Request{Kind: model.Acquire, Key: "k2", Owner: "A", TTL: time.Second}); err != nil || !r.OK {
		t.Fatalf("after the partition: %+v, %v", r, err)
	}
}

// Kill is SIGKILL: the kernel reports the child dead, and a request fails.
func TestKill(t *testing.T) {
	c := start(t, backend.InProcess(memstore.New(), time.Millisecond, nil))
	c.Kill()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := c.Do(ctx, backend.Request{Kind: model.Read, Key: "k"}); err == nil {
		t.Fatal("a killed child answered")
	}
}

// An unregistered name is a clear error, not a hang.
func TestUnregistered(t *testing.T) {
	if _, err := Start(context.Background(), Spec{Name: "nobody"}); err == nil {
		t.Fatal("started an unregistered client")
	}
}

// Owners gives each owner its own process: stopping A leaves B running.
func TestOwners(t *testing.T) {
	svc := backend.InProcess(memstore.New(), time.Millisecond, nil)
	b, err := NewOwners(context.Background(), func(ctx context.Context, owner string) (*Client, error) {
		return Start(ctx, Spec{Name: "passthrough", Service: svc, Label: owner})
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	o := b.(*Owners)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if r, err := o.Do(ctx, backend.Request{Kind: model.Acquire, Key: "k", Owner: "A", TTL: time.Second}); err != nil || !r.OK {
		t.Fatalf("A: %+v %v", r, err)
	}
	resume := o.StopClient("A")
	defer resume()
	if r, err := o.Do(ctx, backend.Request{Kind: model.Acquire, Key: "k", Owner: "B", TTL: time.Second}); err != nil || r.OK {
		t.Fatalf("B, with A stopped: %+v %v; want a refusal (A holds)", r, err)
	}
	if len(o.Stops("A")) != 1 || len(o.Stops("B")) != 0 {
		t.Fatalf("stops: A %v, B %v", o.Stops("A"), o.Stops("B"))
	}
}
