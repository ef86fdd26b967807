// Command layermap prints leasecheck's layer map (docs/design.md §13):
// each layer, what it may import, each of its packages with the packages it
// imports (from `go list -deps`; a wrong-way import marked (!)), and the
// wrong-way imports known today with their reasons. It is `make layers`.
package main

import (
	"fmt"
	"os"

	"github.com/leasecheck/leasecheck/internal/layers"
)

func main() {
	g, err := layers.Load(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "layermap:", err)
		os.Exit(2)
	}
	layers.Print(os.Stdout, g)
	f := layers.Check(g)
	for _, p := range f.Unassigned {
		fmt.Fprintf(os.Stderr, "layermap: package %s belongs to no layer (internal/layers.Map)\n", p)
	}
	for _, e := range f.WrongWay {
		fmt.Fprintf(os.Stderr, "layermap: %s imports %s: the wrong way (%s -> %s)\n", e.From, e.To, layers.LayerOf(e.From), layers.LayerOf(e.To))
	}
	if len(f.Unassigned)+len(f.WrongWay) > 0 {
		os.Exit(1)
	}
}
