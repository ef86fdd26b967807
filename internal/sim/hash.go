package sim

import "github.com/leasecheck/leasecheck/model"

// The trace hash: an FNV-1a digest of every event the loop ran, the history
// and the trace, so two runs can be compared by one number.

func (w *World) mix(vals ...int64) {
	h := w.hash
	for _, v := range vals {
		h ^= uint64(v)
		h *= 1099511628211
	}
	w.hash = h
}

func (w *World) mixString(s string) {
	h := w.hash
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	h ^= 0xff // separator
	h *= 1099511628211
	w.hash = h
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// resultHash finishes the run's hash: it covers every event the loop ran
// (mixed in as they ran), every field of the history and the trace.
func (w *World) resultHash(ops []model.Op) uint64 {
	for i := range ops {
		o := &ops[i]
		w.mixString(o.Process)
		w.mixString(o.Owner)
		w.mixString(o.Key)
		w.mixString(o.Value)
		w.mixString(o.Error)
		w.mix(int64(o.Kind), o.TTL, o.Fence, o.Call, o.Return, o.At, b2i(o.HasValue), b2i(o.Returned), b2i(o.HasAt), b2i(o.OK))
	}
	for i := range w.faultRecs {
		f := &w.faultRecs[i]
		w.mixString(f.Kind)
		w.mixString(f.Target)
		w.mixString(f.Peer)
		w.mixString(f.Detail)
		w.mix(f.Start, f.End, b2i(f.HasEnd), f.Amount, b2i(f.Partial))
	}
	for _, t := range w.trace {
		w.mix(t.T)
		w.mixString(t.Node)
		w.mixString(t.What)
		w.mixString(t.Detail)
	}
	return w.hash
}
