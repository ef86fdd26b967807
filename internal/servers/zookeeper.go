package servers

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ZooKeeper's timing, in the server's own words (zoo.cfg). Sessions are
// expired by the server's session tracker, which wakes once a tick: a
// session expires between its timeout and one tick after it. A short tick
// keeps that lateness small (it is the dominant part of
// internal/impl/zookeeper.Uncertainty) and lets sessions as short as two ticks be
// negotiated, so the TTLs leasecheck uses (0.5–2 s) are granted as asked.
const (
	ZooKeeperTick              = 100 * time.Millisecond
	ZooKeeperMinSessionTimeout = 2 * ZooKeeperTick
	ZooKeeperMaxSessionTimeout = 60 * time.Second
)

// zooKeeperJars is the classpath on Debian's layout (the zookeeper package,
// /usr/share/java): the server and its wire format, the libraries it loads
// at start-up (netty for the client port, metrics, snappy for snapshots,
// commons-cli), and slf4j with its simple binding so that the server's
// warnings reach Process.Log. zookeeper.jar's manifest names its
// dependencies too; listing them keeps the classpath explicit.
var zooKeeperJars = []string{
	"zookeeper.jar", "zookeeper-jute.jar",
	"slf4j-api.jar", "slf4j-simple.jar",
	"netty-buffer.jar", "netty-codec.jar", "netty-common.jar", "netty-handler.jar", "netty-resolver.jar",
	"netty-transport.jar", "netty-transport-native-epoll.jar", "netty-transport-native-unix-common.jar",
	"metrics-core.jar", "snappy-java.jar", "commons-cli.jar",
}

// ZooKeeperClasspath is the Java classpath of the ZooKeeper server:
// $LEASECHECK_ZK_CLASSPATH when set (e.g. "/opt/zookeeper/lib/*" for
// Apache's tarball), else the jars of zooKeeperJars found in
// /usr/share/java (zookeeper.jar and zookeeper-jute.jar are required).
func ZooKeeperClasspath() (string, error) {
	if cp := os.Getenv("LEASECHECK_ZK_CLASSPATH"); cp != "" {
		return cp, nil
	}
	const dir = "/usr/share/java"
	var cp []string
	for i, jar := range zooKeeperJars {
		path := filepath.Join(dir, jar)
		if _, err := os.Stat(path); err != nil {
			if i < 2 {
				return "", fmt.Errorf("ZooKeeper not installed (apt-get install -y zookeeper, or set LEASECHECK_ZK_CLASSPATH): %w", err)
			}
			continue
		}
		cp = append(cp, path)
	}
	return strings.Join(cp, ":"), nil
}

// StartZooKeeper starts a standalone ZooKeeper server
// (org.apache.zookeeper.server.ZooKeeperServerMain, on a zoo.cfg of its
// own) on a free port of 127.0.0.1, with its data in a temporary
// directory. The configuration: tickTime 100 ms, sessions of 200 ms to 60 s,
// no limit on connections per client address (every test client comes from
// 127.0.0.1), no admin HTTP server, the "srvr" and "ruok" four-letter words
// (srvr tells when it serves), and no fsync of the transaction log (a
// SIGKILL loses nothing the kernel already has; Restart replays the log, so
// znodes and sessions survive it). Java comes from $JAVA_HOME or PATH.
func StartZooKeeper(ctx context.Context) (*Process, error) {
	return RetryPortTaken(func() (*Process, error) { return startZooKeeper(ctx) })
}

func startZooKeeper(ctx context.Context) (*Process, error) {
	command, err := zooKeeperCommand()
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "leasecheck-zk-")
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "zoo.cfg")
	conf := fmt.Sprintf(`tickTime=%d
dataDir=%s
clientPort=%d
clientPortAddress=127.0.0.1
minSessionTimeout=%d
maxSessionTimeout=%d
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=srvr,ruok
forceSync=no
`, ZooKeeperTick.Milliseconds(), filepath.Join(dir, "data"), port,
		ZooKeeperMinSessionTimeout.Milliseconds(), ZooKeeperMaxSessionTimeout.Milliseconds())
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	p := &Process{Name: "zookeeper", Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: dir}
	p.newCmd = func() *exec.Cmd { return command("org.apache.zookeeper.server.ZooKeeperServerMain", cfg, dir) }
	// The port is bound before the database is loaded; connections made
	// in between are dropped. srvr answers "not currently serving" until
	// the server is up.
	p.ready = func(ctx context.Context, _ int) error {
		return p.poll(ctx, func() bool {
			out, err := FourLetterWord(p.Addr, "srvr", time.Second)
			return err == nil && strings.Contains(out, "Mode:")
		}, "serve requests")
	}
	if err := p.launch(ctx, 60*time.Second); err != nil {
		return nil, err
	}
	return p, nil
}

// zooKeeperCommand finds Java ($JAVA_HOME or PATH) and the classpath and
// returns how to run a ZooKeeper main class on a zoo.cfg, in dir.
func zooKeeperCommand() (func(main, cfg, dir string) *exec.Cmd, error) {
	java := "java"
	if h := os.Getenv("JAVA_HOME"); h != "" {
		java = filepath.Join(h, "bin", "java")
	}
	java, err := exec.LookPath(java)
	if err != nil {
		return nil, fmt.Errorf("ZooKeeper needs Java (apt-get install -y default-jre-headless): %w", err)
	}
	cp, err := ZooKeeperClasspath()
	if err != nil {
		return nil, err
	}
	// ZooKeeper's own account of an election or a sync (FastLeaderElection's
	// notifications, DIFF/TRUNC/SNAP) is at INFO: LEASECHECK_ZK_LOG=info
	// keeps it (with LEASECHECK_SERVER_LOGS, on disk); warnings by default.
	// Timestamps (UTC wall clock) tie its lines to a history's faults.
	level := "warn"
	if l := os.Getenv("LEASECHECK_ZK_LOG"); l != "" {
		level = l
	}
	return func(main, cfg, dir string) *exec.Cmd {
		cmd := exec.Command(java,
			// A small, quiet JVM: the machine is shared, and a JIT or a
			// collector that eats a core shows up as lease lateness.
			"-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.net.preferIPv4Stack=true",
			"-Dorg.slf4j.simpleLogger.defaultLogLevel="+level, "-Dzookeeper.jmx.log4j.disable=true",
			"-Dorg.slf4j.simpleLogger.showDateTime=true", "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
			// A kill right after the first start leaves a log but no snapshot.
			"-Dzookeeper.snapshot.trust.empty=true",
			"-cp", cp, main, cfg)
		cmd.Dir = dir
		return cmd
	}, nil
}

// FourLetterWord sends one of ZooKeeper's four-letter commands ("srvr",
// "ruok", ...) to addr and returns the answer (the server closes the
// connection after it).
func FourLetterWord(addr, cmd string, timeout time.Duration) (string, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	if _, err := io.WriteString(c, cmd); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(c, 64<<10))
	return string(b), err
}
