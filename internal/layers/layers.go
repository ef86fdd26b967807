// Package layers is leasecheck's map of its own packages (docs/design.md
// §13): which layer each package belongs to, which layers each layer may
// import, and the imports that go the wrong way today, each named with the
// reason it is still there. Its test fails when a package imports across a
// layer the wrong way and the import is not on that list, when a package
// belongs to no layer, and when a listed wrong-way import is gone (so the
// list only shrinks). `make layers` prints the map from `go list -deps`.
package layers

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"sort"
	"strings"
)

// Module is the module path every package name here is relative to.
const Module = "github.com/leasecheck/leasecheck"

// A Layer is a set of packages and the layers they may import (besides
// their own). Packages name directories relative to the module; "X/..."
// is X and everything under it.
type Layer struct {
	Name      string
	What      string
	Packages  []string
	MayImport []string
}

// Map is the layer map, bottom first. A package may import packages of its
// own layer and of the layers its layer's MayImport names; nothing else.
var Map = []Layer{
	{Name: "base", What: "helpers that know nothing of leases",
		Packages: []string{"internal/ports", "internal/rapidtest", "internal/tcpproxy", "faultproxy", "internal/statehash", "internal/timefmt", "internal/raceflag", "internal/fuzzing/..."}},
	{Name: "specification", What: "the history format, the fault vocabulary, the protocol's machine contract, the backend contract, the liveness measurements, the recording rules, a run's record",
		Packages:  []string{"model", "faults", "internal/faultsupport", "machine", "impl/backend", "internal/contract", "internal/liveness", "internal/recording", "internal/runrecord"},
		MayImport: []string{"base"}},
	{Name: "judges", What: "the timed model, the history checker, the run properties",
		Packages:  []string{"internal/timed", "checker", "internal/runprop"},
		MayImport: []string{"base", "specification"}},
	{Name: "reference", What: "the reference coordinator, resource and holder",
		Packages:  []string{"internal/impl/memstore", "internal/impl/holder"},
		MayImport: []string{"base", "specification"}},
	{Name: "workloads", What: "scenarios as data: generation, shrinking, explored spaces, the fault plans' generator, the pair model they are held to",
		Packages:  []string{"internal/scenario", "internal/faultgen", "internal/pairs"},
		MayImport: []string{"base", "specification", "reference"}},
	{Name: "planted bugs", What: "the named bugs on the reference, each with the workload it is caught in",
		Packages:  []string{"internal/impl/mutants"},
		MayImport: []string{"base", "specification", "reference", "workloads"}},
	{Name: "adapters", What: "real lease services behind the backend contract",
		Packages:  []string{"internal/impl/etcd", "internal/impl/redis", "internal/impl/postgres", "internal/impl/zookeeper", "internal/impl/natskv"},
		MayImport: []string{"base", "specification"}},
	{Name: "drivers", What: "what runs machines and records histories: the simulator, the real runner and the real servers it drives, the virtual-time client runner, the explorer",
		Packages:  []string{"internal/sim", "internal/realrun", "internal/procclient", "internal/servers", "internal/etcdmember", "vclient", "internal/explore"},
		MayImport: []string{"base", "specification", "reference", "planted bugs", "workloads"}},
	{Name: "campaign and report", What: "seeds, shards, judging in one place, shrinking, saving; the timeline and the stories; the explorer's judges",
		Packages:  []string{"internal/campaign", "internal/report", "internal/explorejudge"},
		MayImport: []string{"base", "specification", "judges", "reference", "planted bugs", "workloads", "drivers"}},
	{Name: "user-facing", What: "the suites and the servers they start, verify, the Kubernetes clients, the command, the benchmarks",
		Packages: []string{"leasetest", "leasetest/servers", "verify", "vclient/k8slease/...", "internal/k8ssweep", "internal/ctrlruntime", "cmd/...",
			"internal/classgen", "internal/classbench/...", "internal/servers/serverstest", "internal/layers/...", "deploy", "docs"},
		MayImport: []string{"base", "specification", "judges", "reference", "planted bugs", "workloads", "adapters", "drivers", "campaign and report"}},
}

// Doors are the packages a user imports (docs/design.md §13): their API is
// what leasecheck promises to keep. Everything else is the house, under
// internal/ but for cmd/..., examples/... and deploy. faults is the fault
// vocabulary every door's options name.
var Doors = []string{"model", "checker", "machine", "faults", "faultproxy", "impl/backend", "leasetest", "leasetest/servers", "verify", "vclient", "vclient/k8slease"}

// Deprecated are the packages kept at an old path for at least two minor
// releases (CHANGELOG.md), for users only: no package of the module
// imports one (Check finds one that does), so that deleting it breaks
// nothing here. None today: campaign's old path, kept for v0.13.0, is
// gone.
var Deprecated []string

// An Edge is one package importing another.
type Edge struct{ From, To string }

// KnownWrongWay are the imports that go against the map today, each with
// why it is still there. The list only shrinks: the test fails on a new
// wrong-way import and on an entry whose import is gone.
var KnownWrongWay = map[Edge]string{
	{"vclient", "internal/campaign"}: "vclient.Target is a campaign.Target and a run is judged and told through internal/campaign",
}

// Graph is each module package's imports of other module packages (not
// tests'), by directory relative to the module; "." is the module root.
type Graph map[string][]string

// Load lists the module's packages and their imports with `go list -deps`
// run in dir (any directory of the module).
func Load(dir string) (Graph, error) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}:{{join .Imports \" \"}}", Module+"/...")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -deps: %v\n%s", err, stderr.Bytes())
	}
	g := Graph{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, imports, _ := strings.Cut(line, ":")
		pkg, ok := rel(path)
		if !ok {
			continue
		}
		var own []string
		for _, imp := range strings.Fields(imports) {
			if p, ok := rel(imp); ok {
				own = append(own, p)
			}
		}
		sort.Strings(own)
		g[pkg] = own
	}
	return g, nil
}

func rel(path string) (string, bool) {
	if path == Module {
		return ".", true
	}
	p, ok := strings.CutPrefix(path, Module+"/")
	return p, ok
}

// LayerOf returns the layer pkg belongs to, or "" when none claims it.
func LayerOf(pkg string) string {
	for _, l := range Map {
		for _, p := range l.Packages {
			if p == pkg {
				return l.Name
			}
			if dir, ok := strings.CutSuffix(p, "/..."); ok && (pkg == dir || strings.HasPrefix(pkg, dir+"/")) {
				return l.Name
			}
		}
	}
	return ""
}

func layer(name string) Layer {
	for _, l := range Map {
		if l.Name == name {
			return l
		}
	}
	panic("layers: no layer " + name)
}

// Allowed reports whether a package of layer from may import one of layer to.
func Allowed(from, to string) bool {
	return from == to || slices.Contains(layer(from).MayImport, to)
}

// Findings is what Check finds: packages no layer claims, wrong-way imports
// not on KnownWrongWay, entries of KnownWrongWay whose import is gone, and
// imports of a Deprecated package.
type Findings struct {
	Unassigned []string
	WrongWay   []Edge
	Gone       []Edge
	Deprecated []Edge
}

// Check judges g against the map.
func Check(g Graph) Findings {
	var f Findings
	seen := map[Edge]bool{}
	for _, pkg := range sortedKeys(g) {
		from := LayerOf(pkg)
		if from == "" {
			f.Unassigned = append(f.Unassigned, pkg)
			continue
		}
		for _, imp := range g[pkg] {
			if slices.Contains(Deprecated, imp) {
				f.Deprecated = append(f.Deprecated, Edge{pkg, imp})
			}
			to := LayerOf(imp)
			if to == "" || Allowed(from, to) {
				continue
			}
			e := Edge{pkg, imp}
			seen[e] = true
			if _, known := KnownWrongWay[e]; !known {
				f.WrongWay = append(f.WrongWay, e)
			}
		}
	}
	for e := range KnownWrongWay {
		if !seen[e] {
			f.Gone = append(f.Gone, e)
		}
	}
	sort.Slice(f.Gone, func(i, j int) bool { return f.Gone[i].From+" "+f.Gone[i].To < f.Gone[j].From+" "+f.Gone[j].To })
	return f
}

// Print writes the map: each layer, what it may import, and each of its
// packages with what it imports (a door marked), then the known wrong-way
// imports with their reasons.
func Print(w io.Writer, g Graph) {
	for _, l := range Map {
		fmt.Fprintf(w, "%s — %s\n", l.Name, l.What)
		if len(l.MayImport) > 0 {
			fmt.Fprintf(w, "  may import: %s\n", strings.Join(l.MayImport, ", "))
		} else {
			fmt.Fprintf(w, "  may import: nothing of the project\n")
		}
		for _, pkg := range sortedKeys(g) {
			if LayerOf(pkg) != l.Name {
				continue
			}
			door := ""
			if slices.Contains(Doors, pkg) {
				door = " [door]"
			}
			if slices.Contains(Deprecated, pkg) {
				door = " [deprecated]"
			}
			imports := "-"
			if len(g[pkg]) > 0 {
				var marked []string
				for _, imp := range g[pkg] {
					if to := LayerOf(imp); to != "" && !Allowed(l.Name, to) {
						imp += "(!)"
					}
					marked = append(marked, imp)
				}
				imports = strings.Join(marked, " ")
			}
			fmt.Fprintf(w, "  %-38s -> %s\n", pkg+door, imports)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "wrong-way imports known today, marked (!) above (internal/layers.KnownWrongWay):")
	edges := make([]Edge, 0, len(KnownWrongWay))
	for e := range KnownWrongWay {
		edges = append(edges, e)
	}
	sort.Slice(edges, func(i, j int) bool { return edges[i].From+" "+edges[i].To < edges[j].From+" "+edges[j].To })
	for _, e := range edges {
		fmt.Fprintf(w, "  %s -> %s: %s\n", e.From, e.To, KnownWrongWay[e])
	}
}

func sortedKeys(g Graph) []string {
	keys := make([]string, 0, len(g))
	for k := range g {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
