package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/internal/servers/serverstest"
)

// TestNetworkFaultsOnRedis: the faults at each client's socket, on a real
// redis-server through the real runner: every kind applied in full (RESP
// is framed, so a duplicate copies requests), each record's start and end
// those of the socket with what it did to which leg, and no false alarm.
func TestNetworkFaultsOnRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("real time: 3 runs of 5 s")
	}
	url, _ := serverstest.Redis(t)
	injected := map[faults.Kind]int{}
	for seed := uint64(1); seed <= 3; seed++ {
		tg, err := openSpec(url, fmt.Sprintf("lcnet%d%d", seed, time.Now().UnixNano()%1e6))
		if err != nil {
			t.Fatal(err)
		}
		kinds := slices.DeleteFunc(slices.Clone(faults.NetworkKinds), func(k faults.Kind) bool { return k == faults.Duplicate })
		cfg := realrun.Config{Seed: seed, Duration: 5 * time.Second, TTL: time.Second, Faults: kinds}
		res, cr, err := serverstest.RunAndCheck(context.Background(), tg, cfg, time.Minute)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if !cr.OK() {
			for _, v := range cr.Violations {
				t.Errorf("seed %d: false alarm %s (lines %v): %s", seed, v.Property, v.Lines, v.Explanation)
			}
			t.Logf("history: %s", saveForTest(t, res))
		}
		for k, n := range res.Partial {
			t.Errorf("seed %d: %s applied in part %d times", seed, k, n)
		}
		// What each client sent, counted at the socket: every holder and
		// the reader, in RESP commands, at least one per operation it
		// recorded (a holder's own renewals and checks come on top).
		ops := map[string]int64{}
		for _, op := range res.History.Ops {
			ops[strings.SplitN(op.Process, "#", 2)[0]]++
		}
		for name, n := range ops {
			tr, ok := res.Traffic[name]
			if !ok || tr.Protocol != "resp" || tr.Messages[0] < n || tr.Bytes[0] == 0 {
				t.Errorf("seed %d: %s recorded %d operations; its traffic %+v", seed, name, n, tr)
			}
		}
		for k, n := range res.Faults {
			injected[k] += n
		}
		for _, f := range res.History.Faults {
			if !slices.Contains(faults.NetworkKinds, faults.Kind(f.Kind)) {
				continue
			}
			if !f.HasEnd && !strings.Contains(f.Detail, "held the socket") {
				continue // still in force at the horizon: never lifted, so never read back
			}
			if f.End < f.Start || !strings.Contains(f.Detail, "; it held the socket for ") {
				t.Errorf("seed %d: record %+v: want the socket's start and end and what it did", seed, f)
			}
			leg := map[string]string{"request-loss": "request leg", "reply-loss": "reply leg", "request-delay": "request leg", "reply-delay": "reply leg"}[f.Kind]
			if leg != "" && !strings.Contains(f.Detail, "touched nothing") && !strings.Contains(f.Detail, leg) {
				t.Errorf("seed %d: %s record names no %s: %s", seed, f.Kind, leg, f.Detail)
			}
			t.Logf("%s %s [%d, %d]: %s", f.Kind, f.Target, f.Start, f.End, f.Detail)
		}
	}
	for _, k := range faults.NetworkKinds {
		if injected[k] == 0 && k != faults.Duplicate {
			t.Errorf("%s never injected in 3 runs (injected %v)", k, injected)
		}
	}
}

// TestDuplicateOnRedis: a duplicate on Redis sends the holder's requests
// again, and its record names each copy and the server's answer; the
// history is recorded whole (what the checker makes of a copy it has no
// operation for is not asserted: it cannot explain one).
func TestDuplicateOnRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("real time: a 5 s run")
	}
	url, _ := serverstest.Redis(t)
	tg, err := openSpec(url, fmt.Sprintf("lcdup%d", time.Now().UnixNano()%1e6))
	if err != nil {
		t.Fatal(err)
	}
	cfg := realrun.Config{Seed: 1, Duration: 5 * time.Second, TTL: time.Second, Faults: []faults.Kind{faults.Duplicate}}
	res, err := realrun.Run(context.Background(), tg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Faults[faults.Duplicate] != 1 || len(res.Partial) != 0 {
		t.Fatalf("faults %v partial %v; want the one duplicate applied", res.Faults, res.Partial)
	}
	for _, f := range res.History.Faults {
		if f.Kind == string(faults.Duplicate) && !strings.Contains(f.Detail, "sent again: EVALSHA answered") {
			t.Errorf("duplicate record names no copy and answer: %s", f.Detail)
		}
	}
}
