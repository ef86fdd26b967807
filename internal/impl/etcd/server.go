package etcd

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"time"

	"go.etcd.io/etcd/server/v3/embed"

	"github.com/leasecheck/leasecheck/internal/ports"
)

// Embedded is an etcd server started in-process: the zero-setup backend.
type Embedded struct {
	e   *embed.Etcd
	dir string
	// Addr is the client address, 127.0.0.1:port.
	Addr string
}

// StartEmbedded starts a single-member etcd on free ports of 127.0.0.1, with
// its data in a temporary directory (removed by Close). Heartbeat 100 ms and
// election 1 s are etcd's defaults; so is the lessor's expiry sweep of 500 ms.
func StartEmbedded(ctx context.Context) (*Embedded, error) {
	return ports.RetryTaken(func() (*Embedded, error) { return startEmbedded(ctx) })
}

func startEmbedded(ctx context.Context) (*Embedded, error) {
	dir, err := os.MkdirTemp("", "leasecheck-etcd-")
	if err != nil {
		return nil, err
	}
	free, err := ports.FreeN(2) // two different ports
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cport, pport := free[0], free[1]
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.Name = "leasecheck"
	cu := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(cport))}
	pu := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(pport))}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{cu}, []url.URL{cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{pu}, []url.URL{pu}
	cfg.InitialCluster = cfg.Name + "=" + pu.String()
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{"/dev/null"}
	cfg.UnsafeNoFsync = true
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("etcd: start: %w", err)
	}
	t := time.NewTimer(30 * time.Second)
	defer t.Stop()
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("etcd: %w", err)
	case <-t.C:
		e.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("etcd: not ready within 30s")
	case <-ctx.Done():
		e.Close()
		os.RemoveAll(dir)
		return nil, ctx.Err()
	}
	return &Embedded{e: e, dir: dir, Addr: cu.Host}, nil
}

// Close stops the server and removes its data.
func (s *Embedded) Close() error {
	s.e.Close()
	return os.RemoveAll(s.dir)
}
