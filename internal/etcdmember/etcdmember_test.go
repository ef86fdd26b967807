package etcdmember

import (
	"strings"
	"testing"
)

// TestProgramRefusesWithoutDispatch: this test binary does not call
// Dispatch, so run as etcd-server it would run its tests, not etcd; Program
// says so instead of naming it.
func TestProgramRefusesWithoutDispatch(t *testing.T) {
	if p, err := Program(); err == nil || !strings.Contains(err.Error(), "does not dispatch") {
		t.Fatalf("Program() = %v, %v; want the refusal", p, err)
	}
	dispatches = true // as Dispatch leaves it when the process is not a member
	defer func() { dispatches = false }()
	p, err := Program()
	if err != nil || len(p.Args) != 1 || p.Args[0] != Command {
		t.Fatalf("Program() after Dispatch = %v, %v; want this binary with %s", p, err, Command)
	}
}
