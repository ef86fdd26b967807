package servers

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"time"
)

// StartRedis starts redis-server (from PATH) on a free port of 127.0.0.1,
// with an append-only file fsynced on every write, so that a restart keeps
// the leases and the fence counters. It fails when redis-server is missing.
func StartRedis(ctx context.Context) (*Process, error) {
	return RetryPortTaken(func() (*Process, error) { return startRedis(ctx) })
}

func startRedis(ctx context.Context) (*Process, error) {
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
	if err := p.launch(ctx, 15*time.Second); err != nil {
		return nil, err
	}
	return p, nil
}
