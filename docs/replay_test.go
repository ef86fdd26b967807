package docs_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/internal/servers/serverstest"
)

// replayLine is the line a command prints for a failure it saved, or the
// end of one: "  replay: COMMAND", "...; replay: COMMAND".
var replayLine = regexp.MustCompile(`(?m)replay: (.+)$`)

// storyReplay is the command of a saved story's replay section.
var storyReplay = regexp.MustCompile("## Replay\n\n```sh\n(.+)\n```")

// replays runs a failing command (exit 1) in dir, then every replay line
// it printed, as printed, by a shell in the same directory with the
// leasecheck built from this tree first on PATH — as a user who installed
// it runs what the command told them. Each replay must run the saved
// failure again and judge it — a simulated one violated again (exit 1); a
// real round need not fail the same way twice, but it must run (exit 0 or
// 1, never 2) — and save its own failure, never refuse it.
func replays(t *testing.T, real bool, dir string, name string, args ...string) {
	t.Helper()
	env := append(os.Environ(), "PATH="+filepath.Dir(leasecheck(t))+string(os.PathListSeparator)+os.Getenv("PATH"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	run := func(cmd *exec.Cmd) (string, int) {
		cmd.Dir, cmd.Env = dir, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		return out.String(), code
	}
	out, code := run(exec.CommandContext(ctx, name, args...))
	if code != 1 {
		t.Fatalf("%s %s: exit %d, want 1 (a failure saved)\n%s", name, strings.Join(args, " "), code, out)
	}
	lines := replayLine.FindAllStringSubmatch(out, -1)
	if len(lines) == 0 {
		t.Fatalf("%s %s printed no replay line\n%s", name, strings.Join(args, " "), out)
	}
	// The story saved beside each failure gives its replay command too,
	// written by other code than the line printed: it must run as well.
	// Where the command saved its failures: --out, else its default.
	saveDir := "leasecheck-failures"
	for i, a := range args {
		if a == "--out" && i+1 < len(args) {
			saveDir = args[i+1]
		}
	}
	if !filepath.IsAbs(saveDir) {
		saveDir = filepath.Join(dir, saveDir)
	}
	saved, _ := filepath.Glob(filepath.Join(saveDir, "*.scenario.json"))
	if len(saved) == 0 {
		t.Errorf("%s %s saved no failure under %s", name, strings.Join(args, " "), saveDir)
	}
	for _, sc := range saved {
		st := strings.TrimSuffix(sc, ".scenario.json") + ".md"
		b, err := os.ReadFile(st)
		if err != nil {
			t.Errorf("a saved failure without its story: %v", err)
			continue
		}
		m := storyReplay.FindSubmatch(b)
		if m == nil {
			t.Errorf("%s: no replay command under its \"## Replay\" heading", st)
			continue
		}
		lines = append(lines, []string{"", string(m[1])})
	}
	for _, m := range lines {
		line := strings.TrimSpace(m[1])
		rout, rcode := run(exec.CommandContext(ctx, "sh", "-c", line))
		if rcode != 1 && !(real && rcode == 0) {
			t.Errorf("the replay line %q: exit %d, want 1 (the failure found again)\n%s", line, rcode, rout)
		}
		if strings.Contains(rout, "not saved") {
			t.Errorf("the replay line %q refused to save its own failure\n%s", line, rout)
		}
	}
}

// The replay lines of run and explore (the simulator: the failure comes
// back byte for byte) run as printed.
func TestReplayLinesRunAndExplore(t *testing.T) {
	t.Run("run", func(t *testing.T) {
		replays(t, false, t.TempDir(), leasecheck(t), "run", "--mutant", "renew-loop-dies", "--fail-fast", "--out", "failures/")
	})
	t.Run("explore", func(t *testing.T) {
		replays(t, false, t.TempDir(), leasecheck(t), "explore", "--mutant", "greedy-grant")
	})
}

// verify's replay line runs as printed: leasecheck's own on the embedded
// etcd (concurrency.Mutex and a plain Put, caught under pauses), and a
// user's program run with go run from its own directory, as its doc says
// (examples/redislock: redislock-verify on a real Redis) — where the line
// once named a binary nobody installed, and the replay of a saved failure
// refused to save its own ("exists and holds something else").
func TestReplayLinesVerify(t *testing.T) {
	serverstest.Full(t, "real rounds on real servers")
	t.Run("leasecheck", func(t *testing.T) {
		replays(t, true, t.TempDir(), leasecheck(t), "verify", "--backend", "etcd-mutex", "--faults", "pause", "--seeds", "3",
			"--duration", "6s", "--shrink-for", "0", "--progress=false")
	})
	t.Run("example", func(t *testing.T) {
		url, _ := serverstest.Redis(t)
		dir, err := filepath.Abs(filepath.Join("..", "examples", "redislock"))
		if err != nil {
			t.Fatal(err)
		}
		out := t.TempDir()
		replays(t, true, dir, "go", "run", "./cmd/redislock-verify", "--backend", url, "--faults", "pause", "--duration", "6s",
			"--ttl", "1s", "--out", out, "--shrink-for", "0", "--progress=false")
	})
}
