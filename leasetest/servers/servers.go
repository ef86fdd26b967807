package servers

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/internal/servers"
)

// Server is a server process started here.
type Server struct {
	// Name is the program, e.g. "redis-server" or "etcd 3.4.23".
	Name string
	// Addr is where clients connect: 127.0.0.1:port.
	Addr string
	// URL is the address as the server's clients spell it:
	// redis://127.0.0.1:port,
	// postgres://postgres@127.0.0.1:port/postgres?sslmode=disable,
	// http://127.0.0.1:port (etcd), 127.0.0.1:port (ZooKeeper),
	// nats://127.0.0.1:port.
	URL string

	p *servers.Process
}

// Stop freezes the server's processes (SIGSTOP): its connections stay
// open, nothing answers, until Cont. It returns once every one has
// stopped.
func (s *Server) Stop() error { return s.p.Stop() }

// Cont resumes a stopped server (SIGCONT).
func (s *Server) Cont() error { return s.p.Cont() }

// Restart crashes the server (SIGKILL, no clean shutdown), keeps it down
// for down, and starts it again on the same port and data; it returns once
// the server takes requests again. What survives the crash is the
// server's own business (Redis keeps what its append-only file has,
// PostgreSQL and etcd recover from their logs, ZooKeeper from its
// transaction log, nats-server from its JetStream store).
func (s *Server) Restart(ctx context.Context, down time.Duration) error {
	return s.p.Restart(ctx, down)
}

// Close stops the server and removes its data directory.
func (s *Server) Close() error { return s.p.Close() }

func started(p *servers.Process, url string, err error) (*Server, error) {
	if err != nil {
		return nil, err
	}
	return &Server{Name: p.Name, Addr: p.Addr, URL: url, p: p}, nil
}

// StartRedis starts redis-server (from PATH; Debian: apt-get install
// redis-server), with an append-only file fsynced on every write.
func StartRedis(ctx context.Context) (*Server, error) {
	p, err := servers.StartRedis(ctx)
	if err != nil {
		return nil, err
	}
	return started(p, "redis://"+p.Addr, nil)
}

// StartPostgres runs initdb and starts postgres from $LEASECHECK_PG_BIN,
// else /usr/lib/postgresql/15/bin (Debian: apt-get install postgresql-15),
// with trust authentication for the user and database "postgres". Run as
// root, both run as the user "postgres".
func StartPostgres(ctx context.Context) (*Server, error) {
	return started(servers.StartPostgres(ctx))
}

// StartEtcd starts a single-member etcd server from $LEASECHECK_ETCD_BIN,
// else etcd from PATH (Debian: apt-get install etcd-server); Name says its
// version.
func StartEtcd(ctx context.Context) (*Server, error) {
	p, _, err := servers.StartEtcd(ctx)
	if err != nil {
		return nil, err
	}
	return started(p, "http://"+p.Addr, nil)
}

// StartZooKeeper starts a standalone ZooKeeper server with Java from
// $JAVA_HOME or PATH and the jars of $LEASECHECK_ZK_CLASSPATH, else
// /usr/share/java (Debian: apt-get install zookeeper); sessions from 200
// ms to 60 s.
func StartZooKeeper(ctx context.Context) (*Server, error) {
	p, err := servers.StartZooKeeper(ctx)
	if err != nil {
		return nil, err
	}
	return started(p, p.Addr, nil)
}

// StartNATS starts nats-server from $LEASECHECK_NATS_BIN, else PATH
// (Debian: apt-get install nats-server), with JetStream.
func StartNATS(ctx context.Context) (*Server, error) {
	p, err := servers.StartNATSProcess(ctx)
	if err != nil {
		return nil, err
	}
	return started(p, "nats://"+p.Addr, nil)
}

// ForTest starts a server with start (StartRedis, ...) for t and closes it
// when t ends. When the server's program is not installed, t is skipped
// with the reason — or, when the environment sets CI, fails. Any other
// failure to start fails t.
func ForTest(t testing.TB, start func(context.Context) (*Server, error)) *Server {
	t.Helper()
	s, err := start(context.Background())
	if err != nil {
		switch {
		case !notInstalled(err):
			t.Fatalf("starting a server: %v", err)
		case os.Getenv("CI") != "":
			t.Fatalf("%v (CI is set: the CI job must install it)", err)
		default:
			t.Skip(err)
		}
		return nil
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// notInstalled tells a missing program (a lookup in PATH, a file that is
// not there) from a server that would not start.
func notInstalled(err error) bool {
	return errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist)
}
