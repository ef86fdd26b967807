package campaign

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is the I-th of N disjoint parts of a seed range (1 <= I <= N); the
// zero value is the whole range. Part I is the I-th consecutive block, the
// blocks as equal as integers allow, so N shards tile the range exactly and
// their summaries merge into the unsharded one (Merge).
type Shard struct{ I, N int }

// ParseShard parses "I/N".
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("shard %q: want I/N, e.g. 2/4", s)
	}
	sh := Shard{I: i, N: n}
	return sh, sh.Validate()
}

// Validate reports whether the shard is the whole range or 1 <= I <= N.
func (s Shard) Validate() error {
	if s == (Shard{}) || (s.N >= 1 && s.I >= 1 && s.I <= s.N) {
		return nil
	}
	return fmt.Errorf("shard %d/%d: want 1 <= I <= N", s.I, s.N)
}

func (s Shard) String() string {
	if s == (Shard{}) {
		return "all"
	}
	return fmt.Sprintf("%d/%d", s.I, s.N)
}

// Of returns the part of the seeds first, first+1, ..., first+n-1 that the
// shard runs: its first seed and how many.
func (s Shard) Of(first uint64, n int) (uint64, int) {
	if s.N <= 1 {
		return first, n
	}
	lo := int64(s.I-1) * int64(n) / int64(s.N)
	hi := int64(s.I) * int64(n) / int64(s.N)
	return first + uint64(lo), int(hi - lo)
}
