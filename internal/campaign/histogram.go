package campaign

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Latency is an exact histogram of durations (simulated ms): every value
// observed with its count. Its percentiles are exact, it merges by adding
// counts, and its size is the number of distinct values (bounded by the
// scenarios' horizons), not of observations.
type Latency struct {
	counts map[int64]int64
	n      int64
}

// Observe adds one value.
func (l *Latency) Observe(v int64) {
	if l.counts == nil {
		l.counts = map[int64]int64{}
	}
	l.counts[v]++
	l.n++
}

// Merge adds every observation of m.
func (l *Latency) Merge(m *Latency) {
	for v, c := range m.counts {
		if l.counts == nil {
			l.counts = map[int64]int64{}
		}
		l.counts[v] += c
		l.n += c
	}
}

// N is the number of observations.
func (l *Latency) N() int64 { return l.n }

func (l *Latency) values() []int64 {
	vs := make([]int64, 0, len(l.counts))
	for v := range l.counts {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	return vs
}

// Percentile returns the smallest value v such that at least p% of the
// observations are <= v (the nearest-rank percentile); 0 when empty.
func (l *Latency) Percentile(p int) int64 {
	if l.n == 0 {
		return 0
	}
	rank := max((l.n*int64(p)+99)/100, 1)
	seen := int64(0)
	vs := l.values()
	for _, v := range vs {
		seen += l.counts[v]
		if seen >= rank {
			return v
		}
	}
	return vs[len(vs)-1]
}

// Max returns the largest value (0 when empty).
func (l *Latency) Max() int64 {
	if l.n == 0 {
		return 0
	}
	return slices.Max(l.values())
}

// Text renders "p50 12  p99 143  max 403  (n=2875)", or "none (n=0)".
func (l *Latency) Text() string {
	if l.n == 0 {
		return "none (n=0)"
	}
	return fmt.Sprintf("p50 %d  p99 %d  max %d  (n=%d)", l.Percentile(50), l.Percentile(99), l.Max(), l.n)
}

// latencyJSON is Latency's JSON: the percentiles people read, and the
// histogram that makes it mergeable ([value, count] pairs, by value).
type latencyJSON struct {
	N         int64      `json:"n"`
	P50       int64      `json:"p50"`
	P99       int64      `json:"p99"`
	Max       int64      `json:"max"`
	Histogram [][2]int64 `json:"histogram"`
}

// MarshalJSON implements json.Marshaler.
func (l Latency) MarshalJSON() ([]byte, error) {
	j := latencyJSON{N: l.n, P50: l.Percentile(50), P99: l.Percentile(99), Max: l.Max(), Histogram: [][2]int64{}}
	for _, v := range l.values() {
		j.Histogram = append(j.Histogram, [2]int64{v, l.counts[v]})
	}
	return json.Marshal(j)
}

// UnmarshalJSON implements json.Unmarshaler: the histogram is the data,
// and the percentiles must agree with it.
func (l *Latency) UnmarshalJSON(b []byte) error {
	var j latencyJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*l = Latency{}
	for _, vc := range j.Histogram {
		if vc[1] <= 0 {
			return fmt.Errorf("latency histogram: count %d for value %d", vc[1], vc[0])
		}
		if l.counts == nil {
			l.counts = map[int64]int64{}
		}
		l.counts[vc[0]] += vc[1]
		l.n += vc[1]
	}
	if l.n != j.N || l.Percentile(50) != j.P50 || l.Percentile(99) != j.P99 || l.Max() != j.Max {
		return fmt.Errorf("latency: n/p50/p99/max %d/%d/%d/%d disagree with its histogram", j.N, j.P50, j.P99, j.Max)
	}
	return nil
}
