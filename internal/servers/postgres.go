package servers

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// PostgresBinDir is where the PostgreSQL server binaries (initdb, postgres)
// are: $LEASECHECK_PG_BIN, else Debian's place for PostgreSQL 15.
func PostgresBinDir() string {
	if d := os.Getenv("LEASECHECK_PG_BIN"); d != "" {
		return d
	}
	return "/usr/lib/postgresql/15/bin"
}

// StartPostgres runs initdb in a temporary directory and starts postgres on a
// free port of 127.0.0.1 with trust authentication for the database
// "postgres", and returns it with the database's URL. When running as root,
// both run as the "postgres" user (initdb refuses root).
func StartPostgres(ctx context.Context) (*Process, string, error) {
	return retryStarted(func() (*Process, string, error) { return startPostgres(ctx) })
}

func startPostgres(ctx context.Context) (*Process, string, error) {
	bin := PostgresBinDir()
	initdb := filepath.Join(bin, "initdb")
	postgres := filepath.Join(bin, "postgres")
	if _, err := os.Stat(postgres); err != nil {
		return nil, "", fmt.Errorf("PostgreSQL server not installed in %s (set LEASECHECK_PG_BIN): %w", bin, err)
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
		return p.poll(ctx, func() bool {
			l := p.Log()
			return len(l) >= from && strings.Contains(l[from:], "ready to accept connections")
		}, "become ready")
	}
	if err := p.launch(ctx, 30*time.Second); err != nil {
		return nil, "", err
	}
	return p, "postgres://postgres@" + p.Addr + "/postgres?sslmode=disable", nil
}
