// Command exported counts the exported names of each package outside
// internal/ (docs/design.md §13: the doors, and the house that should move
// under internal/): top-level functions, types, constants and variables,
// the exported methods of exported types, and those of a house type an
// exported alias hands out, from the packages' non-test source
// (internal/layers.CountExported). It is `make exported`; a door is marked as `make layers` marks it.
//
// With -names it also lists each package's names.
//
// A name whose doc comment has a "Deprecated:" paragraph is kept for at
// least two minor releases and then goes (CHANGELOG.md): it is listed
// apart, by name, and left out of each package's count and of the totals,
// which say how many were left out.
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/leasecheck/leasecheck/internal/layers"
)

func main() {
	list := flag.Bool("names", false, "list each package's names too")
	flag.Parse()
	e, err := layers.CountExported(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "exported:", err)
		os.Exit(2)
	}
	counts, deprecated := e.Counts, e.Deprecated
	pkgs := make([]string, 0, len(counts))
	for p := range counts {
		pkgs = append(pkgs, p)
	}
	sort.Slice(pkgs, func(i, j int) bool {
		if counts[pkgs[i]] != counts[pkgs[j]] {
			return counts[pkgs[i]] > counts[pkgs[j]]
		}
		return pkgs[i] < pkgs[j]
	})
	old := 0
	for _, p := range pkgs {
		mark := ""
		if slices.Contains(layers.Doors, p) {
			mark = " [door]"
		}
		if n := len(deprecated[p]); n > 0 {
			mark += fmt.Sprintf(" (and %d deprecated)", n)
		}
		old += len(deprecated[p])
		fmt.Printf("%5d  %s%s\n", counts[p], p, mark)
		if *list {
			fmt.Printf("       %s\n", strings.Join(slices.Sorted(slices.Values(e.Names[p])), ", "))
		}
	}
	total, doors := e.Total()
	fmt.Printf("%5d  in all outside internal/ (%d in the doors), not counting %d deprecated\n", total, doors, old)
	if old == 0 {
		return
	}
	fmt.Printf("\ndeprecated, kept for at least two minor releases (%d; %d in all with them):\n", old, total+old)
	for _, p := range pkgs {
		if len(deprecated[p]) == 0 {
			continue
		}
		names := slices.Sorted(slices.Values(deprecated[p]))
		fmt.Printf("%5d  %s: %s\n", len(names), p, strings.Join(names, ", "))
	}
}
