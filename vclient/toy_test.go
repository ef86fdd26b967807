package vclient_test

// A tiny lease client and server, independent of client-go, that the
// harness's own tests drive: each test asserts one behaviour of the
// harness directly (what the server was asked, when, in which order; what
// the history and the fault records say).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/vclient"
)

// served is one request the toy server answered: when (virtual ms), from
// which incarnation, presenting which identity, on which of its senders.
type served struct {
	at       int64
	proc, id string
	sender   string
}

// toyServer is the reference lease over HTTP: POST /lease?owner=O&sender=S
// grants a free or expired lease (a new fence), renews the holder's live
// one, refuses otherwise. It logs every request it serves and notes any
// call that overlaps another (the harness must never make one).
type toyServer struct {
	ttl int64
	// fenced: each grant a new fence, told in the answer, and the ops
	// carry it (a history with fences).
	fenced  bool
	holder  string
	expiry  int64
	fence   int64
	log     []served
	busy    atomic.Int32
	overlap atomic.Int32
}

func (s *toyServer) Serve(now int64, c *vclient.Candidate, req *http.Request, _ []byte) (*http.Response, *model.Op, string) {
	if s.busy.Add(1) != 1 {
		s.overlap.Add(1)
	}
	defer s.busy.Add(-1)
	q := req.URL.Query()
	owner := q.Get("owner")
	s.log = append(s.log, served{at: now, proc: c.Name, id: owner, sender: q.Get("sender")})
	op := &model.Op{Owner: owner, TTL: s.ttl, Kind: model.Acquire}
	switch {
	case s.holder == owner && now < s.expiry:
		op.Kind, op.OK = model.Renew, true // fence-less: the client is given no token
		s.expiry = now + s.ttl
	case s.holder == "" || now >= s.expiry:
		s.fence++
		s.holder, s.expiry = owner, now+s.ttl
		op.OK = true
	default:
		op.Error = "held"
	}
	if !op.OK {
		return vclient.Response(http.StatusConflict, []byte(`{"ok":false}`)), op, ""
	}
	if s.fenced {
		op.Fence = s.fence
	}
	return vclient.Response(http.StatusOK, []byte(fmt.Sprintf(`{"ok":true,"fence":%d}`, s.fence))), op, ""
}

// toyClient is a goroutine-based lease client: Senders goroutines each
// ask for (or renew) the lease every Every, each request bounded by
// Timeout; it believes it leads from a granted request until one fails,
// and while it leads its work goroutine writes every WriteEvery. The
// planted bug RenewLoopDies stops a sender at its first grant, quietly:
// the work goes on believing and writing. WriteAt, when set, makes one write
// at that time whatever it believes (a write that strikes a pause).
// Goodbye sends one last request (sender "goodbye") once its context has
// ended, as a client releasing on its way out does.
type toyClient struct {
	Goodbye        bool
	Senders        int
	Every, Timeout time.Duration
	WriteEvery     time.Duration
	WriteAt        time.Duration
	// WriteTimeout, when set, bounds the WriteAt write's context: a client
	// that gives up on its write (the store may still apply it).
	WriteTimeout      time.Duration
	RenewLoopDies     bool
	mu                sync.Mutex
	started, returned int
}

func (t *toyClient) Start(ctx context.Context, c *vclient.Candidate) {
	t.mu.Lock()
	t.started++
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.returned++
		t.mu.Unlock()
	}()
	hc := &http.Client{Transport: c.Transport()}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		leading bool
		fence   int64 // the fence of the grant it leads under (0: none told)
	)
	believe := func(ok bool, f int64) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case ok && !leading:
			leading, fence = true, f
			c.Leading("granted")
		case !ok && leading:
			leading = false
			c.Stopped("request failed")
		}
	}
	for i := range max(t.Senders, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sleep(ctx, t.Every) {
				rctx, cancel := context.WithTimeout(ctx, t.Timeout)
				status, f, err := post(rctx, hc, c.Identity, fmt.Sprint(i))
				cancel()
				switch {
				case err != nil:
					c.Trace("client", "error")
				case status != http.StatusOK:
					c.Trace("client", fmt.Sprint(status))
				}
				granted := err == nil && status == http.StatusOK
				believe(granted, f)
				if granted && t.RenewLoopDies {
					return
				}
			}
		}()
	}
	if t.WriteEvery > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sleep(ctx, t.WriteEvery) {
				mu.Lock()
				l, f := leading, fence
				mu.Unlock()
				if l {
					c.Write(context.Background(), "", f)
				}
			}
		}()
	}
	if t.WriteAt > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if sleep(ctx, t.WriteAt) {
				wctx, cancel := context.Background(), context.CancelFunc(func() {})
				if t.WriteTimeout > 0 {
					wctx, cancel = context.WithTimeout(wctx, t.WriteTimeout)
				}
				c.Write(wctx, "", 0)
				cancel()
			}
		}()
	}
	wg.Wait()
	if t.Goodbye {
		rctx, cancel := context.WithTimeout(context.Background(), t.Timeout)
		post(rctx, hc, c.Identity, "goodbye")
		cancel()
	}
}

func post(ctx context.Context, hc *http.Client, owner, sender string) (status int, fence int64, err error) {
	u := "http://lease.invalid/lease?" + url.Values{"owner": {owner}, "sender": {sender}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return 0, 0, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	var a struct {
		Fence int64 `json:"fence"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&a)
	return resp.StatusCode, a.Fence, nil
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
