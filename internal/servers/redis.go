package servers

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
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
	// Listening is not ready: while it replays its append-only file after
	// a restart, redis-server answers every command -LOADING.
	p.ready = func(ctx context.Context, _ int) error {
		return p.poll(ctx, func() bool { return redisPong(p.Addr) }, "answer PING with PONG")
	}
	if err := p.launch(ctx, 15*time.Second); err != nil {
		return nil, err
	}
	return p, nil
}

// redisPong reports whether the redis-server at addr answers PING with
// PONG (not -LOADING, not an error).
func redisPong(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}
