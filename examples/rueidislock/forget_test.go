package rueidislock

import "testing"

// A failed acquire gives the owner back the hold it had before — but not
// over a hold another acquire of the owner's registered since: an acquire
// the caller gave up on can fail after the owner's next one was granted,
// and the live hold must stay (else the owner's renewals answer from a
// stale, cancelled hold: "expired" while the server holds its key).
func TestForgetKeepsALaterHold(t *testing.T) {
	k := [2]string{"k", "A"}
	prev, failed, later := &hold{key: "k"}, &hold{key: "k"}, &hold{key: "k"}
	for _, c := range []struct {
		name      string
		now, old  *hold // registered when the failed acquire ends; before it began
		want      *hold
		wantEmpty bool
	}{
		{name: "no other acquire: the hold before", now: failed, old: prev, want: prev},
		{name: "no other acquire, nothing before", now: failed, wantEmpty: true},
		{name: "a later acquire registered its hold", now: later, old: prev, want: later},
		{name: "a later acquire, nothing before", now: later, want: later},
	} {
		a := &Adapter{holds: map[[2]string]*hold{k: c.now}}
		a.forget("k", "A", failed, c.old)
		got, ok := a.holds[k]
		switch {
		case c.wantEmpty && ok:
			t.Errorf("%s: the owner still has a hold", c.name)
		case !c.wantEmpty && got != c.want:
			t.Errorf("%s: the owner's hold is %p, want %p (failed %p, before %p, later %p)", c.name, got, c.want, failed, prev, later)
		}
	}
}
