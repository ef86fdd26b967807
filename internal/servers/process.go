package servers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/leasecheck/leasecheck/internal/ports"
)

// Process is a server process started here.
type Process struct {
	Name string
	Addr string // 127.0.0.1:port, where clients connect
	Dir  string // its data directory, removed by Close

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{}
	log    bytes.Buffer
	newCmd func() *exec.Cmd // the command line, for restarts
	// ready waits, after the port answers, until the server takes requests;
	// logFrom is where this start's output begins in Log().
	ready func(ctx context.Context, logFrom int) error
	term  syscall.Signal // clean shutdown signal (SIGTERM; PostgreSQL: SIGINT, "fast")
	// wait is how long its first start may take to serve; a restart gets
	// as long (a JVM on a loaded machine starts no faster the second time).
	wait time.Duration

	restartMu sync.Mutex // one restart at a time (runs may share a server)
}

// Stop freezes the process (SIGSTOP): its connections stay open, nothing
// answers. It returns once every thread of every process in the server's
// group has stopped: kill(2) only queues the signal, and until the thread
// it picked runs and starts the group stop, the others go on serving — on
// a loaded machine for tens of milliseconds, long enough for a "frozen"
// etcd to answer a read, and for a freeze fault's record to lie about when
// the server stopped answering.
func (p *Process) Stop() error {
	p.mu.Lock()
	cmd := p.cmd
	p.mu.Unlock() // not held while waiting: the server's output goes through it
	if cmd == nil || cmd.Process == nil {
		return errors.New(p.Name + ": not running")
	}
	pgid := cmd.Process.Pid
	if err := syscall.Kill(-pgid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("%s: SIGSTOP: %w", p.Name, err)
	}
	return waitGroupStopped(p.Name, pgid, 10*time.Second)
}

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

// Kill crashes the server for good (SIGKILL to its process group, no
// restart); Close still removes its directory.
func (p *Process) Kill() error {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return errors.New(p.Name + ": not running")
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGCONT)
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
	return err
}

// Restart kills the server (SIGKILL to its process group: a crash, no
// clean shutdown), keeps it down for down, and starts it again on the same
// port and data, waiting until it takes requests. What each server keeps
// across the crash is its own business: Redis is started with an
// append-only file fsynced on every write, PostgreSQL recovers from its
// WAL, ZooKeeper from its snapshot and transaction log (and restores its
// sessions with a fresh timeout), etcd from its WAL (and extends its
// leases on recovery).
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
	wctx, cancel := context.WithTimeout(ctx, max(p.wait, 30*time.Second))
	defer cancel()
	return p.waitReady(wctx, from)
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
	p.keepLog()
	if p.Dir != "" {
		return os.RemoveAll(p.Dir)
	}
	return nil
}

// LogsEnv names the environment variable that keeps servers' output:
// when it names a directory, Close writes everything the server printed
// (every incarnation, up to maxLog) to a file there named after the
// server and the time ("zookeeper-m1-20261202T010405.123.log"), for reading
// a finding against the server's own account (see LEASECHECK_ZK_LOG).
const LogsEnv = "LEASECHECK_SERVER_LOGS"

func (p *Process) keepLog() {
	dir := os.Getenv(LogsEnv)
	if dir == "" {
		return
	}
	name := strings.Map(func(r rune) rune {
		if r == ' ' || r == '/' {
			return '-'
		}
		return r
	}, p.Name)
	path := filepath.Join(dir, name+"-"+time.Now().UTC().Format("20060102T150405.000")+".log")
	if err := os.WriteFile(path, []byte(p.Log()), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "leasecheck: keeping %s's log: %v\n", p.Name, err)
	}
}

// maxLog is how much of a server's output a Process keeps: enough for a
// ZooKeeper ensemble's sweep at LEASECHECK_ZK_LOG=info.
const maxLog = 64 << 20

// Pid is the process id of the server's current incarnation (0 when it
// is not running).
func (p *Process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Running reports whether the server's current incarnation has been
// started and has not exited.
func (p *Process) Running() bool {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// Log returns what the process printed (for error messages), at most maxLog.
func (p *Process) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago
// (ports.Free).
func FreePort() (int, error) { return ports.Free() }

// freePorts returns n different ports, free a moment ago (ports.FreeN): a
// server or cluster needing several asks for them at once.
func freePorts(n int) ([]int, error) { return ports.FreeN(n) }

// RetryPortTaken starts a server or cluster again, up to three times, when
// it (or a member) could not bind the port FreePort gave it
// (ports.RetryTaken). Every failed attempt has stopped its processes and
// removed its directories.
func RetryPortTaken[T any](start func() (T, error)) (T, error) { return ports.RetryTaken(start) }

// retryStarted is RetryPortTaken for a starter that returns a process and
// its address (etcd, PostgreSQL).
func retryStarted(start func() (*Process, string, error)) (*Process, string, error) {
	type started struct {
		p    *Process
		addr string
	}
	s, err := RetryPortTaken(func() (started, error) {
		p, addr, err := start()
		return started{p, addr}, err
	})
	return s.p, s.addr, err
}

// launch starts the first incarnation and waits (up to wait) until it takes
// requests; on failure the process is stopped and its directory removed.
func (p *Process) launch(ctx context.Context, wait time.Duration) error {
	p.wait = wait
	if err := p.start(p.newCmd()); err != nil {
		if p.Dir != "" {
			os.RemoveAll(p.Dir)
		}
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := p.waitReady(wctx, 0); err != nil {
		p.Close()
		return err
	}
	return nil
}

func (p *Process) start(cmd *exec.Cmd) error {
	cmd.Stdout, cmd.Stderr = &lockedWriter{p}, &lockedWriter{p}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// A process group of its own, for SIGSTOP and SIGKILL of the whole
	// server; and killed with us, so that a test killed by its timeout
	// leaves no server behind.
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
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
	if w.p.log.Len() < maxLog {
		w.p.log.Write(b)
	}
	return len(b), nil
}

func (p *Process) waitReady(ctx context.Context, logFrom int) error {
	if err := p.waitListening(ctx); err != nil {
		return err
	}
	if p.ready != nil {
		return p.ready(ctx, logFrom)
	}
	return nil
}

// waitListening waits until Addr accepts connections, the process exits or
// the deadline passes.
func (p *Process) waitListening(ctx context.Context) error {
	return p.poll(ctx, func() bool {
		c, err := net.DialTimeout("tcp", p.Addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, "listen on "+p.Addr)
}

// poll calls ok every 50ms until it returns true; it fails when the process
// exits or ctx ends first, with the process's output in the message.
func (p *Process) poll(ctx context.Context, ok func() bool, what string) error {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	for !ok() {
		select {
		case <-done:
			return fmt.Errorf("%s exited during start-up:\n%s", p.Name, tail(p.Log()))
		case <-ctx.Done():
			return fmt.Errorf("%s did not %s: %v\n%s", p.Name, what, ctx.Err(), tail(p.Log()))
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// tail keeps the end of a long log for an error message.
func tail(s string) string {
	const n = 4000
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
