package classbench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/leasecheck/leasecheck/internal/impl/memstore"
)

// floorOp is what the plain replay decodes each line into.
type floorOp struct {
	Process string  `json:"process"`
	Owner   *string `json:"owner"`
	Key     string  `json:"key"`
	Op      string  `json:"op"`
	TTL     int64   `json:"ttl"`
	Fence   int64   `json:"fence"`
	Value   *string `json:"value"`
	Call    int64   `json:"call"`
	Return  *int64  `json:"return"`
	At      *int64  `json:"at"`
	OK      *bool   `json:"ok"`
}

// ReplayFloor is the floor every time is a ratio to: the plain way to
// replay a history file — decode each line with encoding/json, sort by
// `at` (by call where an op has none), re-apply the semantics with the
// reference coordinator, count the outcomes that differ. It decides
// nothing about concurrency or unanswered ops; it only shows what one
// linear pass over the file costs on this machine.
func ReplayFloor(data []byte) (mismatches int, err error) {
	var ops []floorOp
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var op floorOp
		if err := json.Unmarshal(sc.Bytes(), &op); err != nil {
			return 0, fmt.Errorf("line %d: %v", line, err)
		}
		if op.Op == "" {
			continue // the header, or a fault record
		}
		ops = append(ops, op)
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	when := func(op *floorOp) int64 {
		if op.At != nil {
			return *op.At
		}
		return op.Call
	}
	sort.SliceStable(ops, func(i, j int) bool { return when(&ops[i]) < when(&ops[j]) })
	store := memstore.New()
	for i := range ops {
		op := &ops[i]
		owner := op.Process
		if op.Owner != nil {
			owner = *op.Owner
		}
		var ok bool
		now := when(op)
		switch op.Op {
		case "acquire":
			_, ok = store.Acquire(op.Key, owner, op.TTL, now)
		case "renew":
			ok = store.Renew(op.Key, owner, op.TTL, op.Fence, now)
		case "release":
			ok = store.Release(op.Key, owner, op.Fence)
		case "write":
			v := ""
			if op.Value != nil {
				v = *op.Value
			}
			ok = store.Write(op.Key, owner, op.Fence, v, now) == nil
		case "read":
			_, _ = store.Read(op.Key)
			ok = true
		}
		if op.OK != nil && op.Return != nil && ok != *op.OK {
			mismatches++
		}
	}
	return mismatches, nil
}
