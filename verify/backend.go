package verify

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/procclient"
)

// Backend is one entry of verify's registry: a kind of lease backend, how a
// --backend spec names it, and how to open it. `leasecheck verify` has a
// table of them (etcd, Redis, PostgreSQL, ZooKeeper, ...); a user's own
// main hands its own to Main or Command.
type Backend struct {
	// Name selects it: --backend NAME (e.g. "redis": a server verify starts
	// itself, or a default address of the user's choosing).
	Name string
	// Schemes select it too: --backend SCHEME://... (e.g. "redis",
	// "rediss"); Open gets the whole spec.
	Schemes []string
	// Usage is its line in --help, e.g. "redis (a redis-server started
	// here) | redis://[user:pass@]HOST:PORT[/db]". Default: the name and
	// the schemes.
	Usage string
	// Open makes the target spec names. Everything the run stores must live
	// under prefix (a string unique to this verify run, e.g. "lc3fa9c0d1e2"),
	// and the backend should implement backend.Cleaner to remove it: verify
	// cleans up after every round. An error means the backend cannot be used
	// (exit 2); it must not contain credentials beyond those in spec, which
	// verify scrubs.
	Open func(ctx context.Context, spec, prefix string) (*Opened, error)
}

// Opened is a backend ready to run against.
type Opened struct {
	// Target is what the real runner runs against: the backend's Info, its
	// address (for the per-client proxies that make delay and partition
	// faults), how to connect a client, and the server process when verify
	// started it (for the server faults).
	Target RunTarget
	// Shown is how output names it ("redis (started here, 127.0.0.1:6379)");
	// empty means the spec without its password.
	Shown string
	// Close, when set, stops what Open started.
	Close func()
}

// Connect is the Opened of a server at addr (host:port): every client
// process of a run connects with open, to addr or to its own proxy in front
// of it (open gets the address to dial). info describes the backend
// (backend.Info: its zero value is the honest default of a lock library —
// no fencing token, writes not fenced).
func Connect(info backend.Info, addr string, open func(ctx context.Context, addr string) (backend.Backend, error)) *Opened {
	return &Opened{Target: RunTarget{Info: info, Addr: addr, Open: open}}
}

func (b *Backend) usage() string {
	if b.Usage != "" {
		return b.Usage
	}
	parts := []string{b.Name}
	for _, s := range b.Schemes {
		parts = append(parts, s+"://...")
	}
	return strings.Join(parts, " | ")
}

// lookup finds the backend spec names: by its name, or by the scheme of a
// URL. An unknown spec is an error naming the known ones.
func lookup(backends []Backend, spec string) (*Backend, error) {
	for i := range backends {
		if backends[i].Name == spec {
			return &backends[i], nil
		}
	}
	if scheme, _, ok := strings.Cut(spec, "://"); ok {
		for i := range backends {
			for _, s := range backends[i].Schemes {
				if s == scheme {
					return &backends[i], nil
				}
			}
		}
	}
	// The names only: the lines --list-backends prints made one line of
	// thousands of characters for a few dozen backends.
	var known []string
	for i := range backends {
		known = append(known, backends[i].Name)
	}
	return nil, fmt.Errorf("unknown backend %q; known: %s (--list-backends says what each takes)", redact(spec), strings.Join(known, ", "))
}

// newPrefix returns a prefix unique to one verify run: "lc" and 12 hex
// digits.
func newPrefix() string {
	b := make([]byte, 6)
	rand.Read(b)
	return "lc" + hex.EncodeToString(b)
}

// redact is spec as verify prints it and records it (in a saved scenario's
// implementation, in the replay line): the password of a URL replaced by
// "xxxxx", the user name kept.
func redact(spec string) string {
	u, err := url.Parse(spec)
	if err != nil || u.Host == "" {
		if i := strings.LastIndex(spec, "@"); i >= 0 {
			return "…@" + spec[i+1:]
		}
		return spec
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// scrub removes spec's password from a message (an error of the backend's
// client may quote the URL).
func scrub(msg, spec string) string {
	if u, err := url.Parse(spec); err == nil {
		if pw, has := u.User.Password(); has && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
			msg = strings.ReplaceAll(msg, url.QueryEscape(pw), "xxxxx")
		}
	}
	return msg
}

// checkReachable opens one client directly (no proxy) within 15s, so that
// a backend that is down, hangs or answers garbage is reported before the
// run, and removes what that client stored. own reports whether that
// client is a process of its own (leasetest.OpenClient).
func checkReachable(ctx context.Context, tg RunTarget) (own bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	type result struct {
		b   backend.Backend
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b, err := tg.Open(ctx, tg.Addr)
		ch <- result{b, err}
	}()
	where := tg.Info.Name
	if tg.Addr != "" {
		where += " at " + tg.Addr
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return false, fmt.Errorf("%s is not usable: %w", where, r.err)
		}
		if c, ok := backend.As[backend.Cleaner](r.b); ok {
			c.Cleanup(ctx)
		}
		_, own = backend.As[*procclient.Client](r.b)
		return own, r.b.Close()
	case <-ctx.Done():
		return false, fmt.Errorf("%s did not answer within 15s", where)
	}
}
