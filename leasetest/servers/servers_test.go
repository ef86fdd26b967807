package servers_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leasecheck/leasecheck/leasetest/servers"
)

// talk sends req on a fresh connection to addr and returns the first
// line of the answer, within d.
func talk(addr, req string, d time.Duration) (string, error) {
	c, err := net.DialTimeout("tcp", addr, d)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(d))
	if req != "" {
		if _, err := io.WriteString(c, req); err != nil {
			return "", err
		}
	}
	return bufio.NewReader(c).ReadString('\n')
}

// Each server is started, answers in its own protocol at Addr and URL,
// and is gone when its test ends.
func TestEachServerAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		start  func(context.Context) (*servers.Server, error)
		scheme string
		answer func(s *servers.Server) error
	}{
		{"redis", servers.StartRedis, "redis://", func(s *servers.Server) error {
			return want(talk(s.Addr, "PING\r\n", 5*time.Second))("+PONG")
		}},
		{"postgres", servers.StartPostgres, "postgres://", func(s *servers.Server) error {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := pgx.Connect(ctx, s.URL)
			if err != nil {
				return err
			}
			defer c.Close(ctx)
			var n int
			if err := c.QueryRow(ctx, "SELECT 1").Scan(&n); err != nil || n != 1 {
				return fmt.Errorf("SELECT 1 = %d, %v", n, err)
			}
			return nil
		}},
		{"etcd", servers.StartEtcd, "http://", func(s *servers.Server) error {
			r, err := (&http.Client{Timeout: 5 * time.Second}).Get(s.URL + "/health")
			if err != nil {
				return err
			}
			defer r.Body.Close()
			b, _ := io.ReadAll(r.Body)
			if !strings.Contains(string(b), `"health":"true"`) {
				return fmt.Errorf("/health = %s", b)
			}
			return nil
		}},
		{"zookeeper", servers.StartZooKeeper, "127.0.0.1:", func(s *servers.Server) error {
			c, err := net.DialTimeout("tcp", s.Addr, 5*time.Second)
			if err != nil {
				return err
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			io.WriteString(c, "ruok")
			b, _ := io.ReadAll(c)
			if string(b) != "imok" {
				return fmt.Errorf("ruok = %q", b)
			}
			return nil
		}},
		{"nats", servers.StartNATS, "nats://", func(s *servers.Server) error {
			line, err := talk(s.Addr, "", 5*time.Second)
			if err := want(line, err)("INFO "); err != nil {
				return err
			}
			if !strings.Contains(line, `"jetstream":true`) {
				return fmt.Errorf("JetStream is off: %s", line)
			}
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var addr string
			t.Run("started", func(t *testing.T) {
				s := servers.ForTest(t, tc.start)
				addr = s.Addr
				if !strings.HasPrefix(s.Addr, "127.0.0.1:") || !strings.HasPrefix(s.URL, tc.scheme) {
					t.Errorf("Addr %q, URL %q", s.Addr, s.URL)
				}
				if err := tc.answer(s); err != nil {
					t.Fatalf("%s at %s: %v", s.Name, s.Addr, err)
				}
			})
			if addr == "" {
				return // skipped: the program is not installed
			}
			if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				c.Close()
				t.Errorf("%s still accepts connections after its test ended", addr)
			}
		})
	}
}

func want(line string, err error) func(prefix string) error {
	return func(prefix string) error {
		if err != nil {
			return err
		}
		if !strings.HasPrefix(line, prefix) {
			return fmt.Errorf("answered %q, want %q...", line, prefix)
		}
		return nil
	}
}

// A stopped server answers nothing until it is resumed; a restarted one
// answers again on the same address.
func TestStopContRestart(t *testing.T) {
	s := servers.ForTest(t, servers.StartRedis)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if line, err := talk(s.Addr, "PING\r\n", 300*time.Millisecond); err == nil {
		t.Fatalf("a stopped redis-server answered %q", line)
	}
	if err := s.Cont(); err != nil {
		t.Fatal(err)
	}
	if err := want(talk(s.Addr, "PING\r\n", 5*time.Second))("+PONG"); err != nil {
		t.Fatalf("after Cont: %v", err)
	}
	if err := s.Restart(context.Background(), 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := want(talk(s.Addr, "PING\r\n", 5*time.Second))("+PONG"); err != nil {
		t.Fatalf("after Restart: %v", err)
	}
}

// fakeT records what ForTest does with its test.
type fakeT struct {
	testing.TB
	fatal, skip string
}

func (f *fakeT) Helper()                           {}
func (f *fakeT) Fatalf(format string, args ...any) { f.fatal = fmt.Sprintf(format, args...) }
func (f *fakeT) Skip(args ...any)                  { f.skip = fmt.Sprint(args...) }
func (f *fakeT) Cleanup(func())                    { panic("cleanup of a server that did not start") }

// A missing program skips the test with the reason, but fails it under
// CI; a server that would not start fails it either way.
func TestForTestMissingProgram(t *testing.T) {
	missing := func(context.Context) (*servers.Server, error) {
		_, err := exec.LookPath("no-such-server-program")
		return nil, fmt.Errorf("no-such-server not installed (apt-get install no-such-server): %w", err)
	}
	broken := func(context.Context) (*servers.Server, error) {
		return nil, errors.New("no-such-server exited during start-up")
	}
	for _, tc := range []struct {
		ci          string
		start       func(context.Context) (*servers.Server, error)
		fatal, skip bool
	}{
		{"", missing, false, true},
		{"true", missing, true, false},
		{"", broken, true, false},
	} {
		t.Setenv("CI", tc.ci)
		f := &fakeT{}
		if s := servers.ForTest(f, tc.start); s != nil {
			t.Errorf("CI=%q: a server that did not start was returned", tc.ci)
		}
		if (f.fatal != "") != tc.fatal || (f.skip != "") != tc.skip {
			t.Errorf("CI=%q: fatal %q, skip %q; want fatal %v, skip %v", tc.ci, f.fatal, f.skip, tc.fatal, tc.skip)
		}
		if f.skip != "" && !strings.Contains(f.skip, "apt-get install no-such-server") {
			t.Errorf("the skip does not say how to install: %q", f.skip)
		}
	}
}
