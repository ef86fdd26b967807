package timed

import (
	"sort"

	"github.com/leasecheck/leasecheck/model"
)

// Names interns owners: the model compares small integers, and reports turn
// them back into names. One Names serves a whole history, so that a
// streaming check compiles op by op exactly as Compile does. (Values are
// canonical handles instead: there are as many as writes.)
type Names struct {
	Owners []string // by interned ID
	owners map[string]int32
}

// NewNames returns an empty interning table.
func NewNames() *Names {
	return &Names{owners: map[string]int32{}}
}

func intern(m map[string]int32, list *[]string, s string) int32 {
	if id, ok := m[s]; ok {
		return id
	}
	id := int32(len(*list))
	m[s] = id
	*list = append(*list, s)
	return id
}

// Owner returns the owner's name for an interned ID ("nobody" for NoOwner).
func (n *Names) Owner(id int32) string {
	if id == NoOwner {
		return "nobody"
	}
	return n.Owners[id]
}

// Input compiles one op for the model under clock uncertainty u.
func (n *Names) Input(op *model.Op, u int64) Input {
	in := Input{
		Kind:    op.Kind,
		Owner:   intern(n.owners, &n.Owners, op.Owner),
		Value:   NoValue,
		TTL:     op.TTL,
		Fence:   op.Fence,
		OK:      op.OK && op.Returned,
		Unknown: !op.Returned,
	}
	if op.Kind == model.Write || op.Kind == model.Read && op.HasValue {
		in.Value = ValueOf(op.Value)
	}
	switch {
	case op.HasAt:
		in.Lo, in.Hi = op.At, op.At
	case op.Returned:
		in.Lo, in.Hi = op.Call-u, op.Return+u
	default:
		in.Lo, in.Hi = op.Call-u, Inf
	}
	if in.Unknown && in.Kind == model.Acquire {
		in.Fence = 0 // whatever it was granted, nobody heard
	}
	return in
}

// Compiled is a history prepared for the model: owners and values interned,
// operations grouped by key, each op's clock window computed.
type Compiled struct {
	History *model.History
	*Names
	Keys []KeyOps // sorted by key
}

// KeyOps is one key's operations. Keys are independent (docs/specification.md §2), so
// each is checked on its own.
type KeyOps struct {
	Key string
	// Index[i] is the position in History.Ops of the op compiled to Inputs[i].
	Index  []int
	Inputs []Input
}

// Compile interns a history and splits it by key.
func Compile(h *model.History) *Compiled {
	c := &Compiled{History: h, Names: NewNames()}
	byKey := map[string]int{}
	u := h.Header.ClockUncertainty
	for i := range h.Ops {
		op := &h.Ops[i]
		k, ok := byKey[op.Key]
		if !ok {
			k = len(c.Keys)
			byKey[op.Key] = k
			c.Keys = append(c.Keys, KeyOps{Key: op.Key})
		}
		c.Keys[k].Index = append(c.Keys[k].Index, i)
		c.Keys[k].Inputs = append(c.Keys[k].Inputs, c.Input(op, u))
	}
	sort.Slice(c.Keys, func(i, j int) bool { return c.Keys[i].Key < c.Keys[j].Key })
	return c
}

// DescribeState renders a state in words, with names instead of IDs.
func (n *Names) DescribeState(sem model.Semantics, s State) string {
	return describeState(n, sem, s)
}
