package memstore

import "sort"

// table holds per-key entries: the first key inline, the others in a map.
// A lease service usually serves one key per test; keeping it inline makes
// creating and copying a store (the explorer copies one per state) cost no
// allocation.
type table[E any] struct {
	k0   string
	e0   E
	has0 bool
	more map[string]*E
}

// lookup returns key's entry, or nil.
func (t *table[E]) lookup(key string) *E {
	if t.has0 && t.k0 == key {
		return &t.e0
	}
	if t.more != nil {
		return t.more[key]
	}
	return nil
}

// get returns key's entry, creating a zero one on first use.
func (t *table[E]) get(key string) *E {
	if e := t.lookup(key); e != nil {
		return e
	}
	if !t.has0 {
		t.k0, t.has0 = key, true
		return &t.e0
	}
	if t.more == nil {
		t.more = map[string]*E{}
	}
	e := new(E)
	t.more[key] = e
	return e
}

// clone returns a deep copy.
func (t *table[E]) clone() table[E] {
	c := table[E]{k0: t.k0, e0: t.e0, has0: t.has0}
	if t.more != nil {
		c.more = make(map[string]*E, len(t.more))
		for k, e := range t.more {
			cp := *e
			c.more[k] = &cp
		}
	}
	return c
}

// keys returns the keys in order.
func (t *table[E]) keys() []string {
	var ks []string
	if t.has0 {
		ks = append(ks, t.k0)
	}
	for k := range t.more {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// each calls f on every entry (in no particular order: f must not depend on it).
func (t *table[E]) each(f func(*E)) {
	if t.has0 {
		f(&t.e0)
	}
	for _, e := range t.more {
		f(e)
	}
}

// sorted calls f on every entry in key order.
func (t *table[E]) sorted(f func(k string, e *E)) {
	if t.more == nil {
		if t.has0 {
			f(t.k0, &t.e0)
		}
		return
	}
	for _, k := range t.keys() {
		f(k, t.lookup(k))
	}
}
