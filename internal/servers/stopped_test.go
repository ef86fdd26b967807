package servers

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestStopWaitsForEveryProcess: Stop returns only when each process of the
// server's group has stopped (a shell and its two children here, as
// PostgreSQL's postmaster and its backends), and Cont sets them running.
func TestStopWaitsForEveryProcess(t *testing.T) {
	p := &Process{Name: "sh", Dir: t.TempDir()}
	cmd := exec.Command("/bin/sh", "-c", "sleep 60 & sleep 60 & wait")
	if err := p.start(cmd); err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	pgid := cmd.Process.Pid
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if r, err := groupRunning(pgid); err != nil || r != "" {
		t.Fatalf("after Stop: %q still runs (%v)", r, err)
	}
	if err := p.Cont(); err != nil {
		t.Fatal(err)
	}
	if r, err := groupRunning(pgid); err != nil || r == "" {
		t.Fatalf("after Cont: groupRunning = %q, %v; want a sleeping thread named", r, err)
	}
}

// TestProcStat: the state and process group come from after the last ')',
// whatever the command name holds.
func TestProcStat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stat")
	line := "4242 (we(i) rd) name) T 1 777 777 0 -1 4194560 0 0 0 0\n"
	if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	state, pgrp, ok := procStat(path)
	if !ok || state != 'T' || pgrp != 777 {
		t.Fatalf("procStat(%q) = %c, %d, %v; want T, 777, true", line, state, pgrp, ok)
	}
	if err := os.WriteFile(path, []byte("4242 (truncated"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := procStat(path); ok {
		t.Fatal("procStat of a line with no ')' reported ok")
	}
}
