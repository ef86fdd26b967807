package servers

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// waitGroupStopped polls /proc until no thread of any process in process
// group pgid is still running (each is stopped, traced or dead), or within
// has passed.
func waitGroupStopped(name string, pgid int, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		running, err := groupRunning(pgid)
		if err != nil {
			return fmt.Errorf("%s: waiting for SIGSTOP to take: %w", name, err)
		}
		if running == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: SIGSTOP sent, but %s still runs after %v", name, running, within)
		}
		time.Sleep(time.Millisecond)
	}
}

// groupRunning names a thread of process group pgid that has not stopped
// ("pid 12 thread 14, state S"), or returns "" when all have.
func groupRunning(pgid int) (string, error) {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return "", err
	}
	for _, d := range procs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		_, pgrp, ok := procStat(filepath.Join("/proc", d.Name(), "stat"))
		if !ok || pgrp != pgid {
			continue // gone meanwhile, or another group's
		}
		tasks, err := os.ReadDir(filepath.Join("/proc", d.Name(), "task"))
		if err != nil {
			continue // exited meanwhile
		}
		for _, t := range tasks {
			state, _, ok := procStat(filepath.Join("/proc", d.Name(), "task", t.Name(), "stat"))
			if !ok {
				continue
			}
			switch state {
			case 'T', 't', 'Z', 'X', 'x':
			default:
				return fmt.Sprintf("pid %d thread %s (state %c)", pid, t.Name(), state), nil
			}
		}
	}
	return "", nil
}

// procStat reads a /proc stat file's state and process group. The command
// name, in parentheses, may hold spaces and parentheses itself, so fields
// count from the last ')'.
func procStat(path string) (state byte, pgrp int, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:]) // state ppid pgrp ...
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	g, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], g, true
}
