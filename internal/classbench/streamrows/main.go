// Command streamrows times `leasecheck check` on long one-key histories, the
// size a user streams (10^6 operations, about 100 MB of JSONL, past the
// size the checker holds in memory), for this tree and for tagged
// releases built from their source in the same run: wall time as a ratio
// to the plain replay of the same file (classbench.ReplayFloor) and the
// process's peak resident memory. Two shapes, exact and interval mode,
// each written as a recorder writes it, each op at its return, with now
// and then an auditor's slow read called long before: the lines' calls go back in
// time further than the checker's first pass guessed, so it gives up for a
// survey and a second pass (the path that reads the file three times).
//
//	go run ./internal/classbench/streamrows                    # the rows
//	go run ./internal/classbench/streamrows -gen DIR           # only write the two files
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/leasecheck/leasecheck/internal/classbench"
	"github.com/leasecheck/leasecheck/model"
)

func main() {
	ops := flag.Int("ops", 1_000_000, "operations in each history")
	reps := flag.Int("reps", 3, "runs of each program on each file (the median is reported)")
	releases := flag.String("releases", "v0.9.0,v0.15.0=40fa0cb", "releases to time beside this tree: tags of classbench.Releases, or TAG=COMMIT")
	gen := flag.String("gen", "", "only write the two histories into this directory")
	floor := flag.String("floor", "", "only replay this file (classbench.ReplayFloor) and print the nanoseconds it took")
	flag.Parse()
	if *floor != "" {
		if err := replayOnly(*floor); err != nil {
			fmt.Fprintln(os.Stderr, "streamrows:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*ops, *reps, *releases, *gen); err != nil {
		fmt.Fprintln(os.Stderr, "streamrows:", err)
		os.Exit(1)
	}
}

func run(ops, reps int, releases, genDir string) error {
	dir := genDir
	if dir == "" {
		d, err := os.MkdirTemp("", "leasecheck-streamrows-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	files := map[string]string{}
	for _, mode := range []string{"exact", "interval"} {
		path := filepath.Join(dir, fmt.Sprintf("%s-%d.jsonl", mode, ops))
		if err := writeHistory(path, ops, mode == "interval"); err != nil {
			return err
		}
		files[mode] = path
		fmt.Fprintf(os.Stderr, "wrote %s\n", path)
	}
	if genDir != "" {
		return nil
	}
	root, err := classbench.ModuleRoot()
	if err != nil {
		return err
	}
	progs, err := build(root, dir, releases)
	if err != nil {
		return err
	}
	fmt.Printf("%-9s %-9s %9s %9s %9s %8s  %s\n", "shape", "program", "floor-s", "time-s", "x-floor", "peak-MB", "verdict")
	for _, mode := range []string{"exact", "interval"} {
		// The floor is measured in a process of its own: the replay holds
		// the whole file, and a child forked from a parent that large
		// reports the parent's resident memory as its own peak.
		var floors []time.Duration
		for range 3 {
			out, err := exec.Command(os.Args[0], "-floor", files[mode]).Output()
			if err != nil {
				return fmt.Errorf("replaying %s: %v", files[mode], err)
			}
			var ns int64
			if _, err := fmt.Sscan(string(out), &ns); err != nil {
				return fmt.Errorf("replaying %s: %q", files[mode], out)
			}
			floors = append(floors, time.Duration(ns))
		}
		floor := median(floors)
		for _, p := range progs {
			var times []time.Duration
			var peak int64
			verdict := ""
			for range reps {
				t, kb, out, err := timeCheck(p.Path, files[mode])
				if err != nil {
					verdict = err.Error()
					break
				}
				times = append(times, t)
				peak = max(peak, kb)
				verdict = out
			}
			if len(times) == 0 {
				fmt.Printf("%-9s %-9s %9.2f %9s %9s %8s  %s\n", mode, p.Name, floor.Seconds(), "-", "-", "-", verdict)
				continue
			}
			t := median(times)
			fmt.Printf("%-9s %-9s %9.2f %9.2f %9.2f %8d  %s\n", mode, p.Name, floor.Seconds(), t.Seconds(), t.Seconds()/floor.Seconds(), peak/1024, verdict)
		}
	}
	return nil
}

// replayOnly prints how long the plain replay of path took, in ns. An
// interval-mode file has no at to replay by, so the replay's outcomes
// differ from the file's: the time is what the floor is, a linear pass.
func replayOnly(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	start := time.Now()
	n, err := classbench.ReplayFloor(data)
	t := time.Since(start)
	if err != nil {
		return err
	}
	if n != 0 && strings.HasPrefix(filepath.Base(path), "exact") {
		return fmt.Errorf("%s: %d outcomes differ from the replay", path, n)
	}
	fmt.Println(t.Nanoseconds())
	return nil
}

// build builds this tree's leasecheck command and each release's.
func build(root, dir, releases string) ([]classbench.Program, error) {
	bin := filepath.Join(dir, "leasecheck-now")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/leasecheck")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building this tree: %v\n%s", err, out)
	}
	progs := []classbench.Program{{Name: "now", Path: bin}}
	for _, name := range strings.Split(releases, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		rel := classbench.Release{Tag: name}
		if tag, commit, ok := strings.Cut(name, "="); ok {
			rel = classbench.Release{Tag: tag, Commit: commit}
		} else if i := slices.IndexFunc(classbench.Releases, func(r classbench.Release) bool { return r.Tag == name }); i >= 0 {
			rel = classbench.Releases[i]
		} else {
			return nil, fmt.Errorf("release %q: not in classbench.Releases; name it TAG=COMMIT", name)
		}
		src, err := rel.Tree(root, dir)
		if err != nil {
			return nil, err
		}
		bin := filepath.Join(dir, "leasecheck-"+rel.Tag)
		cmd := exec.Command("go", "build", "-mod=mod", "-o", bin, "./cmd/leasecheck")
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("building %s: %v\n%s", rel.Tag, err, out)
		}
		progs = append(progs, classbench.Program{Name: rel.Tag, Path: bin})
	}
	return progs, nil
}

// timeCheck runs `check --json` on file: its wall time, peak RSS in KB,
// and "ok" or what it said.
func timeCheck(bin, file string) (time.Duration, int64, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "check", "--json", "--timeout", "5m", file)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	t := time.Since(start)
	var kb int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		kb = ru.Maxrss
	}
	if err != nil {
		return 0, 0, "", fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	if !strings.Contains(string(out), `"ok": true`) {
		return t, kb, "NOT OK: " + strings.Join(strings.Fields(string(out)), " "), nil
	}
	return t, kb, "ok", nil
}

func median(ts []time.Duration) time.Duration {
	s := slices.Clone(ts)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// writeHistory writes a correct one-key history of n ops: four holders
// taking turns on one lease (acquire, renew, write, read, release), the
// store applying each at its time, inside the op's window (exact mode:
// at that time). The ops are written in the order they returned.
func writeHistory(path string, n int, interval bool) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	hdr := model.DefaultHeader()
	hdr.TimeUnit = "ms"
	w := model.NewWriter(bw, hdr)
	rng := rand.New(rand.NewPCG(42, uint64(n)))
	names := []string{"alpha", "bravo", "charlie", "delta"}
	free := map[string]int64{}
	var (
		now, fence, expires int64
		holder, value       string
		hasValue            bool
		pending             []model.Op // interval mode: written at their return
	)
	flush := func(upTo int64) error {
		slices.SortStableFunc(pending, func(a, b model.Op) int {
			if a.Return != b.Return {
				return int(a.Return - b.Return)
			}
			return int(a.Call - b.Call)
		})
		i := 0
		for ; i < len(pending) && pending[i].Return < upTo; i++ {
			if err := w.Write(&pending[i]); err != nil {
				return err
			}
		}
		pending = append(pending[:0], pending[i:]...)
		return nil
	}
	for i := range n {
		now += 1 + rng.Int64N(3)
		p := names[rng.IntN(len(names))]
		now = max(now, free[p])
		held := holder != "" && expires > now
		op := model.Op{Process: p, Owner: p, Key: "k", Returned: true}
		audit := rng.IntN(2000) == 0
		switch {
		case audit:
			// An auditor's read, now and then, that took long: called
			// when the auditor was last free, long before.
			op = model.Op{Process: "audit", Owner: "audit", Key: "k", Kind: model.Read, OK: true, Value: value, HasValue: hasValue, Returned: true}
		case !held || holder != p:
			op.Kind, op.TTL = model.Acquire, 50
			if !held {
				fence++
				holder, expires = p, now+50
				op.OK, op.Fence = true, fence
			}
		default:
			switch r := rng.Float64(); {
			case r < 0.05:
				op.Kind, op.Fence, op.OK = model.Release, fence, true
				holder, expires = "", -1
			case r < 0.35:
				op.Kind, op.TTL, op.Fence, op.OK = model.Renew, 50, fence, true
				expires = now + 50
			case r < 0.55:
				op.Kind, op.OK = model.Read, true
				op.Value, op.HasValue = value, hasValue
			default:
				value, hasValue = fmt.Sprintf("%s-%d", p, i), true
				op.Kind, op.Fence, op.Value, op.HasValue, op.OK = model.Write, fence, value, true, true
			}
		}
		op.Call = max(free[p], now-rng.Int64N(3))
		if audit {
			op.Call = free["audit"]
		}
		op.Return = now + 1 + rng.Int64N(3)
		if !interval {
			op.At, op.HasAt = now, true
		}
		free[op.Process] = op.Return
		pending = append(pending, op)
		if len(pending) >= 64 {
			if err := flush(now - 8); err != nil {
				return err
			}
		}
	}
	if err := flush(1 << 62); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Close()
}
