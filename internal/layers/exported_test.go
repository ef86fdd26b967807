package layers

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// CountExported counts a door's own names, the methods of a house type it
// aliases, and sets the deprecated apart; it counts nothing under
// internal/, in tests or in a main package.
func TestCountExported(t *testing.T) {
	root := t.TempDir()
	write := func(path, src string) {
		t.Helper()
		full := filepath.Join(root, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("internal/house/house.go", `package house

import "github.com/leasecheck/leasecheck/internal/below"

type T struct{}
func (T) Shown() {}
func (*T) Too() {}
func (T) hidden() {}
func Exported() {}

// U moved down a layer.
type U = below.U
`)
	write("internal/below/below.go", `package below
type U struct{}
func (U) Moved() {}
`)
	write("door/door.go", `package door

import h "github.com/leasecheck/leasecheck/internal/house"

// A is the house's T.
type A = h.T

// B is the house's U, which is below's.
type B = h.U

// Old was the house's T.
//
// Deprecated: gone next release.
type Old = h.T

const C, c = 1, 2

type D int

// G has a field on its way out.
type G struct {
	Kept int
	// Gone was G's.
	//
	// Deprecated: use Kept.
	Gone int
}

func (D) M() {}
func (d D) m() {}
func F() {}

// E is an unexported type under an exported name.
type E = e

type e struct{}

func (e) Called() {}
`)
	write("door/door_test.go", `package door
func TestNotCounted() {}
`)
	write("cmd/tool/main.go", `package main
func Exported() {}
`)
	e, err := CountExported(root)
	if err != nil {
		t.Fatal(err)
	}
	// A, A.Shown, A.Too, B, B.Moved, C, D, D.M, E, E.Called, F, G (its
	// fields are not names).
	if e.Counts["door"] != 12 {
		t.Errorf("door counts %d names %v, want 12 (A, A.Shown, A.Too, B, B.Moved, C, D, D.M, E, E.Called, F, G)", e.Counts["door"], e.Names["door"])
	}
	if old := slices.Sorted(slices.Values(e.Deprecated["door"])); !slices.Equal(old, []string{"G.Gone", "Old", "Old.Shown", "Old.Too"}) {
		t.Errorf("deprecated %v, want Old and its methods, and G's field Gone", old)
	}
	for p := range e.Counts {
		if p != "door" && e.Counts[p] != 0 {
			t.Errorf("%s counted %d: only door is outside internal/ and not a main package", p, e.Counts[p])
		}
	}
	if all, doors := e.Total(); all != 12 || doors != 0 {
		t.Errorf("Total() = %d, %d; want 12 in all, none in a door (door is not one of Doors)", all, doors)
	}
}
