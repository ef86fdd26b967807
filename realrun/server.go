package realrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Server is a coordinator process the harness controls, for the
// coordinator-crash fault: stopped with SIGSTOP and resumed with SIGCONT,
// and, when it is a Restarter, killed and started again. Only servers the
// harness started itself are controlled.
type Server interface {
	Stop() error // SIGSTOP: the process freezes, its connections stay open
	Cont() error // SIGCONT
}

// Restarter is a Server that can crash and come back with its data.
type Restarter interface {
	Restart(ctx context.Context, down time.Duration) error
}

// Process is a server process started by the harness.
type Process struct {
	Name string
	Addr string // 127.0.0.1:port
	Dir  string // its data directory

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{}
	log    bytes.Buffer
	newCmd func() *exec.Cmd // the command line, for restarts
	// ready waits, after the port answers, until the server takes requests.
	ready func(ctx context.Context, logFrom int) error
	term  syscall.Signal // clean shutdown signal (SIGTERM; PostgreSQL: SIGINT, "fast")

	restartMu sync.Mutex // one restart at a time (runs may share a server)
}

// Stop freezes the process (SIGSTOP).
func (p *Process) Stop() error { return p.signal(syscall.SIGSTOP) }

// Cont resumes it (SIGCONT).
func (p *Process) Cont() error { return p.signal(syscall.SIGCONT) }

func (p *Process) signal(s syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return errors.New(p.Name + ": not running")
	}
	// The whole process group: PostgreSQL's backends are children of the
	// postmaster, and a stopped server must stop answering on every one.
	return syscall.Kill(-p.cmd.Process.Pid, s)
}

// Restart kills the server (SIGKILL to its process group: a crash, no
// clean shutdown), keeps it down for down, and starts it again on the same
// port and data, waiting until it takes requests. Redis is started with an
// append-only file fsynced on every write and PostgreSQL recovers from its
// WAL, so what they acknowledged survives; leases keep running on the
// server's clock while it is down.
func (p *Process) Restart(ctx context.Context, down time.Duration) error {
	p.restartMu.Lock()
	defer p.restartMu.Unlock()
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGCONT)
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(down):
	}
	from := len(p.Log())
	if err := p.start(p.newCmd()); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := p.waitListening(wctx); err != nil {
		return err
	}
	if p.ready != nil {
		return p.ready(wctx, from)
	}
	return nil
}

// Close stops the process (SIGCONT first, in case it was frozen, then its
// shutdown signal; SIGKILL after 10s) and removes its directory.
func (p *Process) Close() error {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGCONT)
		term := p.term
		if term == 0 {
			term = syscall.SIGTERM
		}
		cmd.Process.Signal(term)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	if p.Dir != "" {
		return os.RemoveAll(p.Dir)
	}
	return nil
}

// Log returns what the process printed (for error messages).
func (p *Process) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func (p *Process) start(cmd *exec.Cmd) error {
	cmd.Stdout, cmd.Stderr = &lockedWriter{p}, &lockedWriter{p}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	p.mu.Lock()
	p.cmd, p.done = cmd, done
	p.mu.Unlock()
	go func() { cmd.Wait(); close(done) }()
	return nil
}

type lockedWriter struct{ p *Process }

func (w *lockedWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	if w.p.log.Len() < 1<<20 {
		w.p.log.Write(b)
	}
	return len(b), nil
}

// waitListening waits until addr accepts connections, the process exits or
// the deadline passes.
func (p *Process) waitListening(ctx context.Context) error {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	for {
		c, err := net.DialTimeout("tcp", p.Addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("%s exited during start-up:\n%s", p.Name, p.Log())
		case <-ctx.Done():
			return fmt.Errorf("%s did not listen on %s: %v\n%s", p.Name, p.Addr, ctx.Err(), p.Log())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// StartRedis starts redis-server (from PATH) on a free port of 127.0.0.1,
// with an append-only file fsynced on every write, so that a restart keeps
// the leases and the fence counters. It fails when redis-server is missing.
func StartRedis(ctx context.Context) (*Process, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server not installed (apt-get install -y redis-server): %w", err)
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "leasecheck-redis-")
	if err != nil {
		return nil, err
	}
	p := &Process{Name: "redis-server", Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: dir}
	p.newCmd = func() *exec.Cmd {
		return exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
			"--save", "", "--appendonly", "yes", "--appendfsync", "always", "--daemonize", "no", "--protected-mode", "yes")
	}
	if err := p.start(p.newCmd()); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := p.waitListening(wctx); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// PostgresBinDir is where Debian puts the PostgreSQL 15 server binaries.
var PostgresBinDir = "/usr/lib/postgresql/15/bin"

// StartPostgres runs initdb in a temporary directory and starts postgres on a
// free port of 127.0.0.1 with trust authentication for the database
// "postgres". When running as root, both run as the "postgres" user (initdb
// refuses root). The URL of the database is in the returned Process's URL.
func StartPostgres(ctx context.Context) (*Process, string, error) {
	initdb := filepath.Join(PostgresBinDir, "initdb")
	postgres := filepath.Join(PostgresBinDir, "postgres")
	if _, err := os.Stat(postgres); err != nil {
		return nil, "", fmt.Errorf("PostgreSQL server not installed in %s: %w", PostgresBinDir, err)
	}
	port, err := FreePort()
	if err != nil {
		return nil, "", err
	}
	dir, err := os.MkdirTemp("", "leasecheck-pg-")
	if err != nil {
		return nil, "", err
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, "", fmt.Errorf("running as root and no postgres user to run initdb as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, "", err
		}
	}
	data := filepath.Join(dir, "data")
	ini := exec.CommandContext(ctx, initdb, "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8")
	ini.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	ini.Dir = dir
	if out, err := ini.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, "", fmt.Errorf("initdb: %v\n%s", err, out)
	}
	p := &Process{Name: "postgres", Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: dir}
	p.term = syscall.SIGINT
	p.newCmd = func() *exec.Cmd {
		cmd := exec.Command(postgres, "-D", data, "-p", strconv.Itoa(port), "-c", "listen_addresses=127.0.0.1",
			"-c", "unix_socket_directories="+dir, "-c", "fsync=off", "-c", "max_connections=100")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		cmd.Dir = dir
		return cmd
	}
	// Listening is not ready: it refuses sessions while starting up.
	p.ready = func(ctx context.Context, from int) error {
		for !strings.Contains(p.Log()[from:], "ready to accept connections") {
			select {
			case <-ctx.Done():
				return fmt.Errorf("postgres not ready: %v\n%s", ctx.Err(), p.Log())
			case <-time.After(50 * time.Millisecond):
			}
		}
		return nil
	}
	if err := p.start(p.newCmd()); err != nil {
		os.RemoveAll(dir)
		return nil, "", err
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err = p.waitListening(wctx)
	if err == nil {
		err = p.ready(wctx, 0)
	}
	if err != nil {
		p.Close()
		return nil, "", err
	}
	url := "postgres://postgres@" + p.Addr + "/postgres?sslmode=disable"
	return p, url, nil
}
