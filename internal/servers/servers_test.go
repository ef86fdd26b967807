package servers_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/jackc/pgx/v5"
	goredis "github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/leasecheck/leasecheck/internal/servers"
	"github.com/leasecheck/leasecheck/internal/servers/serverstest"
)

// store is a client of one server kind: put a value, get it back.
type store struct {
	put, get func(ctx context.Context, v string) (string, error)
	close    func()
}

type starter struct {
	name  string
	start func(ctx context.Context) (*servers.Process, error)
	dial  func(t *testing.T, p *servers.Process) store
}

var starters = []starter{
	{"redis", servers.StartRedis, func(t *testing.T, p *servers.Process) store {
		c := goredis.NewClient(&goredis.Options{Addr: p.Addr, MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second})
		return store{
			put:   func(ctx context.Context, v string) (string, error) { return "", c.Set(ctx, "marker", v, 0).Err() },
			get:   func(ctx context.Context, _ string) (string, error) { return c.Get(ctx, "marker").Result() },
			close: func() { c.Close() },
		}
	}},
	{"postgres", func(ctx context.Context) (*servers.Process, error) {
		p, _, err := servers.StartPostgres(ctx)
		return p, err
	}, func(t *testing.T, p *servers.Process) store {
		url := "postgres://postgres@" + p.Addr + "/postgres?sslmode=disable&connect_timeout=1"
		q := func(ctx context.Context, sql string, args ...any) (string, error) {
			c, err := pgx.Connect(ctx, url)
			if err != nil {
				return "", err
			}
			defer c.Close(context.Background())
			if _, err := c.Exec(ctx, "CREATE TABLE IF NOT EXISTS marker (v text)"); err != nil {
				return "", err
			}
			var s string
			err = c.QueryRow(ctx, sql, args...).Scan(&s)
			return s, err
		}
		return store{
			put: func(ctx context.Context, v string) (string, error) {
				return q(ctx, "INSERT INTO marker SELECT $1::text RETURNING v", v)
			},
			get:   func(ctx context.Context, _ string) (string, error) { return q(ctx, "SELECT v FROM marker") },
			close: func() {},
		}
	}},
	{"zookeeper", servers.StartZooKeeper, func(t *testing.T, p *servers.Process) store {
		c, _, err := zk.Connect([]string{p.Addr}, 10*time.Second, zk.WithLogger(quiet{}), zk.WithLogInfo(false))
		if err != nil {
			t.Fatal(err)
		}
		// go-zookeeper calls block without a context; each gets a goroutine
		// and the context's deadline.
		call := func(ctx context.Context, f func() (string, error)) (string, error) {
			type r struct {
				s   string
				err error
			}
			ch := make(chan r, 1)
			go func() { s, err := f(); ch <- r{s, err} }()
			select {
			case x := <-ch:
				return x.s, x.err
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		return store{
			put: func(ctx context.Context, v string) (string, error) {
				return call(ctx, func() (string, error) { return c.Create("/marker", []byte(v), 0, zk.WorldACL(zk.PermAll)) })
			},
			get: func(ctx context.Context, _ string) (string, error) {
				return call(ctx, func() (string, error) { b, _, err := c.Get("/marker"); return string(b), err })
			},
			close: c.Close,
		}
	}},
	{"etcd", func(ctx context.Context) (*servers.Process, error) {
		p, _, err := servers.StartEtcd(ctx)
		return p, err
	}, func(t *testing.T, p *servers.Process) store {
		c, err := clientv3.New(clientv3.Config{Endpoints: []string{p.Addr}, DialTimeout: time.Second, Logger: zap.NewNop()})
		if err != nil {
			t.Fatal(err)
		}
		return store{
			put: func(ctx context.Context, v string) (string, error) { _, err := c.Put(ctx, "marker", v); return "", err },
			get: func(ctx context.Context, _ string) (string, error) {
				r, err := c.Get(ctx, "marker")
				if err != nil {
					return "", err
				}
				if len(r.Kvs) == 0 {
					return "", fmt.Errorf("marker: not found")
				}
				return string(r.Kvs[0].Value), nil
			},
			close: func() { c.Close() },
		}
	}},
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// TestServers: each starter's server takes requests; Stop freezes it (a
// request times out) and Cont resumes it; Restart kills it and brings it
// back on the same port with what it had acknowledged; Close removes its
// directory.
func TestServers(t *testing.T) {
	serverstest.Full(t, "real servers")
	for _, s := range starters {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			p, err := s.start(ctx)
			if err != nil {
				serverstest.SkipOrFail(t, "%s: %v", s.name, err)
			}
			closed := false
			defer func() {
				if !closed {
					p.Close()
				}
			}()
			st := s.dial(t, p)
			defer st.close()
			within := func(d time.Duration, f func(context.Context, string) (string, error), v string) (string, error) {
				ctx, cancel := context.WithTimeout(ctx, d)
				defer cancel()
				return f(ctx, v)
			}
			if _, err := within(10*time.Second, st.put, "before"); err != nil {
				t.Fatalf("put on the fresh server: %v\n%s", err, p.Log())
			}
			if err := p.Stop(); err != nil {
				t.Fatal(err)
			}
			if v, err := within(500*time.Millisecond, st.get, ""); err == nil {
				t.Errorf("get while stopped = %q, want a timeout", v)
			}
			if err := p.Cont(); err != nil {
				t.Fatal(err)
			}
			if v, err := within(10*time.Second, st.get, ""); err != nil || v != "before" {
				t.Errorf("get after SIGCONT = %q, %v; want %q", v, err, "before")
			}
			start := time.Now()
			if err := p.Restart(ctx, 200*time.Millisecond); err != nil {
				t.Fatalf("restart: %v", err)
			}
			t.Logf("%s: restart took %v (200ms down)", s.name, time.Since(start).Round(time.Millisecond))
			// The client reconnects by itself (Redis, ZooKeeper, etcd) or
			// per request (PostgreSQL); give it a few tries.
			var v string
			for i := 0; i < 50; i++ {
				if v, err = within(2*time.Second, st.get, ""); err == nil {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if v != "before" {
				t.Errorf("get after restart = %q, %v; want %q (acknowledged before the crash)", v, err, "before")
			}
			dir := p.Dir
			closed = true
			if err := p.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("%s still exists after Close (%v)", dir, err)
			}
		})
	}
}

// TestNoOrphans: a server outlives no test binary killed by its timeout.
// A child copy of this test binary starts redis-server, prints its pid
// and exits without closing it; the server must be gone soon after.
func TestNoOrphans(t *testing.T) {
	serverstest.Full(t, "real servers")
	if os.Getenv("LEASECHECK_ORPHAN_CHILD") != "" {
		p, err := servers.StartRedis(context.Background())
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(2)
		}
		fmt.Println("pid", p.Pid(), p.Dir)
		os.Exit(0) // no Close: as if killed
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		serverstest.SkipOrFail(t, "%v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoOrphans$")
	cmd.Env = append(os.Environ(), "LEASECHECK_ORPHAN_CHILD=1")
	out, err := cmd.Output()
	var pid int
	var dir string
	if _, serr := fmt.Sscanf(string(out), "pid %d %s", &pid, &dir); err != nil || serr != nil {
		t.Fatalf("child: %v, %q", err, out)
	}
	defer os.RemoveAll(dir)
	for i := 0; i < 50; i++ {
		if syscall.Kill(pid, 0) != nil {
			return // gone
		}
		time.Sleep(100 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("redis-server (pid %d) outlived the test binary that started it by 5s", pid)
}
