package servers

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// EtcdBin is the etcd server binary: $LEASECHECK_ETCD_BIN, else etcd from
// PATH (Debian's etcd-server package installs /usr/bin/etcd).
func EtcdBin() (string, error) {
	if b := os.Getenv("LEASECHECK_ETCD_BIN"); b != "" {
		p, err := exec.LookPath(b)
		if err != nil {
			return "", fmt.Errorf("etcd server not found at LEASECHECK_ETCD_BIN=%s: %w", b, err)
		}
		return p, nil
	}
	b, err := exec.LookPath("etcd")
	if err != nil {
		return "", fmt.Errorf("etcd server not installed (apt-get install -y etcd-server, or set LEASECHECK_ETCD_BIN): %w", err)
	}
	return b, nil
}

// EtcdProgram is a program that runs an etcd server from etcd's command
// line: Path with Args before etcd's own flags. The installed etcd is
// {EtcdBin(), nil}; the etcd server leasecheck embeds runs as a hidden
// subcommand of a binary that dispatches it (package
// internal/etcdmember: {leasecheck, ["etcd-server"]}).
type EtcdProgram struct {
	Path string
	Args []string
}

// InstalledEtcd is the installed etcd server (EtcdBin) as a program.
func InstalledEtcd() (EtcdProgram, error) {
	bin, err := EtcdBin()
	if err != nil {
		return EtcdProgram{}, err
	}
	return EtcdProgram{Path: bin}, nil
}

// Command is the program run with etcd's flags args.
func (p EtcdProgram) Command(args ...string) *exec.Cmd {
	return exec.Command(p.Path, append(slices.Clone(p.Args), args...)...)
}

func (p EtcdProgram) String() string { return strings.Join(append([]string{p.Path}, p.Args...), " ") }

// Version runs the program with --version and returns the server's
// version ("3.4.23", "3.7.3"): what the program says, not what its caller
// expects it to be.
func (p EtcdProgram) Version() (string, error) {
	out, err := p.Command("--version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s --version: %v: %s", p, err, out)
	}
	m := etcdVersionRE.FindSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("%s --version: no version in %q", p, out)
	}
	return string(m[1]), nil
}

var etcdVersionRE = regexp.MustCompile(`etcd Version: (\S+)`)

// EtcdVersion runs `bin --version` and returns the server's version
// ("3.4.23").
func EtcdVersion(bin string) (string, error) { return EtcdProgram{Path: bin}.Version() }

// StartEtcd starts a single-member etcd server process (EtcdBin) on free
// ports of 127.0.0.1, with its data in a temporary directory, and returns
// it with the server's version. Heartbeat 100 ms and election timeout 1 s
// are etcd's defaults, as is the lessor's expiry sweep every 500 ms. It is
// ready when /health says so (the member has a leader).
func StartEtcd(ctx context.Context) (*Process, string, error) {
	return retryStarted(func() (*Process, string, error) { return startEtcd(ctx) })
}

func startEtcd(ctx context.Context) (*Process, string, error) {
	bin, err := EtcdBin()
	if err != nil {
		return nil, "", err
	}
	version, err := EtcdVersion(bin)
	if err != nil {
		return nil, "", err
	}
	free, err := freePorts(2)
	if err != nil {
		return nil, "", err
	}
	cport, pport := free[0], free[1]
	dir, err := os.MkdirTemp("", "leasecheck-etcd-")
	if err != nil {
		return nil, "", err
	}
	client := "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(cport))
	peer := "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(pport))
	p := &Process{Name: "etcd " + version, Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(cport)), Dir: dir}
	p.newCmd = func() *exec.Cmd {
		cmd := exec.Command(bin, "--name", "leasecheck", "--data-dir", filepath.Join(dir, "data"),
			"--listen-client-urls", client, "--advertise-client-urls", client,
			"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
			"--initial-cluster", "leasecheck="+peer, "--initial-cluster-state", "new",
			"--logger", "zap", "--log-outputs", "stderr", "--log-level", "warn")
		cmd.Dir = dir
		return cmd
	}
	p.ready = etcdHealthy(p, client)
	if err := p.launch(ctx, 60*time.Second); err != nil {
		return nil, "", err
	}
	return p, version, nil
}
