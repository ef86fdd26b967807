package realrun

import (
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/tcpproxy"
)

// TestNetFaultsOverlap: network faults of one kind may overlap; the end of
// one leaves what the others still ask for in force.
func TestNetFaultsOverlap(t *testing.T) {
	var n netFaults
	n.active = []activeNet{
		{kind: faults.ReplyLoss, id: 1},
		{kind: faults.Blackhole, id: 2},
		{kind: faults.RequestDelay, amount: 300 * time.Millisecond, id: 3},
		{kind: faults.RequestDelay, amount: 100 * time.Millisecond, id: 4},
		{kind: faults.ReplyDelay, amount: 50 * time.Millisecond, id: 5},
	}
	s := n.settings()
	if s.lost != [2]bool{true, true} || s.delay[tcpproxy.Request] != 300*time.Millisecond || s.delay[tcpproxy.Reply] != 50*time.Millisecond {
		t.Fatalf("settings %+v", s)
	}
	n.active = n.active[2:] // the losses ended
	n.active = append(n.active[:0], n.active[1:]...)
	s = n.settings()
	if s.lost != [2]bool{} || s.delay[tcpproxy.Request] != 100*time.Millisecond {
		t.Errorf("after the losses and the longer delay ended: %+v; want no loss and the 100ms delay", s)
	}
	n.active = []activeNet{{kind: faults.RequestLoss}}
	if s := n.settings(); s.lost != [2]bool{true, false} || s.dup || s.jitter != 0 {
		t.Errorf("request-loss alone: %+v", s)
	}
}
