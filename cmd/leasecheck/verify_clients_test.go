package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// clientsJSON is the summary's "clients".
type clientsJSON struct {
	Clients struct {
		Mode          string `json:"mode"`
		Processes     int    `json:"processes"`
		Pids          []int  `json:"pids"`
		KernelStops   int    `json:"kernel_stops"`
		KernelStopped int64  `json:"kernel_stopped"`
	} `json:"clients"`
	Faults     map[string]int `json:"faults"`
	Violations map[string]int `json:"violations"`
}

// children watches this process's children that are verify's client
// processes (their environment names verify's client), as the kernel
// shows them in /proc: every one seen, and those seen stopped (state T).
type children struct {
	mu      sync.Mutex
	seen    map[int]bool
	stopped map[int]bool
	done    chan struct{}
	wg      sync.WaitGroup
}

func watchChildren() *children {
	c := &children{seen: map[int]bool{}, stopped: map[int]bool{}, done: make(chan struct{})}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		// pid: its environment names verify's client. Only a yes is kept:
		// between fork and exec a child's environment is still the parent's.
		client := map[int]bool{}
		for {
			select {
			case <-c.done:
				return
			case <-time.After(5 * time.Millisecond):
			}
			tasks, _ := filepath.Glob("/proc/self/task/*/children")
			for _, f := range tasks {
				b, _ := os.ReadFile(f)
				for _, s := range strings.Fields(string(b)) {
					pid, _ := strconv.Atoi(s)
					if !client[pid] {
						env, _ := os.ReadFile("/proc/" + s + "/environ")
						if !slices.Contains(strings.Split(string(env), "\x00"), "LEASECHECK_CLIENT=leasecheck-verify") {
							continue
						}
						client[pid] = true
					}
					stat, _ := os.ReadFile("/proc/" + s + "/stat")
					// pid (comm) STATE ...: the state follows the last ')'.
					st := ""
					if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
						st = string(stat[i+2])
					}
					c.mu.Lock()
					c.seen[pid] = true
					if st == "T" {
						c.stopped[pid] = true
					}
					c.mu.Unlock()
				}
			}
		}
	}()
	return c
}

func (c *children) stop() (seen, stopped map[int]bool) {
	close(c.done)
	c.wg.Wait()
	return c.seen, c.stopped
}

// TestVerifyClientsAreProcesses: by default verify runs every owner's
// client of a built-in backend (redis, a redis-server started here) in a
// child process of its own, and a pause is a SIGSTOP the kernel reported:
// the children are seen in /proc, one of them stopped (state T), and the
// summary's kernel record agrees; --clients in-process starts none.
func TestVerifyClientsAreProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("real time: 2 rounds of 4 s on a redis-server")
	}
	for _, tc := range []struct {
		name  string
		extra []string
		procs bool
	}{
		{"default", nil, true},
		{"in-process", []string{"--clients", "in-process"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := watchChildren()
			var so, se bytes.Buffer
			args := append([]string{"verify", "--out", t.TempDir(), "--backend", "redis", "--faults", "pause", "--duration", "4s",
				"--shrink-for", "0", "--json"}, tc.extra...)
			code := run(args, nil, &so, &se)
			seen, stopped := w.stop()
			t.Logf("exit %d\n%s%s", code, so.String(), se.String())
			if code != exitOK {
				t.Fatalf("exit %d, want 0", code)
			}
			var s clientsJSON
			if err := json.Unmarshal(so.Bytes(), &s); err != nil {
				t.Fatal(err)
			}
			if s.Faults["pause"] != 1 {
				t.Fatalf("pauses injected: %d, want 1", s.Faults["pause"])
			}
			c := s.Clients
			if !tc.procs {
				if len(seen) > 0 || c.Processes > 0 || c.Mode != "in-process" {
					t.Errorf("--clients in-process: %d client processes seen in /proc, summary %+v; want none", len(seen), c)
				}
				return
			}
			if c.Mode != "process" || c.Processes < 4 { // three holders and a reader at least
				t.Fatalf("summary's clients %+v: want mode process, at least 4 processes", c)
			}
			for _, pid := range c.Pids {
				if !seen[pid] {
					t.Errorf("client process %d of the summary was never seen in /proc as a child of this process", pid)
				}
			}
			if c.KernelStops < 1 || c.KernelStopped <= 0 {
				t.Errorf("the kernel reported %d stops (%dµs): want the pause's", c.KernelStops, c.KernelStopped)
			}
			var stoppedOurs int
			for pid := range stopped {
				if slices.Contains(c.Pids, pid) {
					stoppedOurs++
				}
			}
			if stoppedOurs == 0 {
				t.Errorf("no client process was seen stopped (state T) in /proc; seen %v", seen)
			}
		})
	}
}

// TestVerifyClientsOptOutFlag: --clients takes process or in-process.
func TestVerifyClientsOptOutFlag(t *testing.T) {
	var so, se bytes.Buffer
	if code := run([]string{"verify", "--clients", "threads"}, nil, &so, &se); code != exitUsage || !strings.Contains(se.String(), `--clients is "process" or "in-process"`) {
		t.Errorf("--clients threads: exit %d, %q", code, se.String())
	}
}
