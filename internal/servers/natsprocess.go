package servers

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// NATSServerBin is the nats-server program: $LEASECHECK_NATS_BIN, else
// nats-server from PATH (Debian's nats-server package).
func NATSServerBin() (string, error) {
	name := "nats-server"
	if b := os.Getenv("LEASECHECK_NATS_BIN"); b != "" {
		name = b
	}
	bin, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("nats-server not installed (apt-get install -y nats-server, or set LEASECHECK_NATS_BIN): %w", err)
	}
	return bin, nil
}

// StartNATSProcess starts nats-server (NATSServerBin) as a process of its
// own, with JetStream, on a free port of 127.0.0.1 and its store in a
// temporary directory. Unlike StartNATS (the server embedded in this
// process, whose members are killed and started again in-process), it is a
// Process: frozen, resumed and crashed as the other servers are. It is
// ready when the server says so ("Server is ready").
func StartNATSProcess(ctx context.Context) (*Process, error) {
	return RetryPortTaken(func() (*Process, error) { return startNATSProcess(ctx) })
}

func startNATSProcess(ctx context.Context) (*Process, error) {
	bin, err := NATSServerBin()
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "leasecheck-nats-")
	if err != nil {
		return nil, err
	}
	p := &Process{Name: "nats-server", Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: dir}
	p.newCmd = func() *exec.Cmd {
		cmd := exec.Command(bin, "-a", "127.0.0.1", "-p", strconv.Itoa(port), "-js", "-sd", filepath.Join(dir, "jetstream"))
		cmd.Dir = dir
		return cmd
	}
	// The client port opens before JetStream has recovered its store.
	p.ready = func(ctx context.Context, from int) error {
		return p.poll(ctx, func() bool {
			l := p.Log()
			return len(l) >= from && strings.Contains(l[from:], "Server is ready")
		}, "become ready")
	}
	if err := p.launch(ctx, 30*time.Second); err != nil {
		return nil, err
	}
	return p, nil
}
