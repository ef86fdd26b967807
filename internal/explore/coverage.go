package explore

import (
	"bufio"
	"fmt"
	"io"
	pathpkg "path"
	"slices"
	"strconv"
	"strings"
)

// Coverage says which code of the explored machines an exploration ran:
// Go's statement coverage of those packages (internal/impl/holder, internal/impl/memstore),
// measured by running the same exploration in a build of leasecheck with
// coverage (`explore --coverage DIR`), so that a user sees what a
// "complete" covered and what it did not.
type Coverage struct {
	// Method says how it was measured.
	Method   string            `json:"method"`
	Packages []PackageCoverage `json:"packages"`
}

// PackageCoverage is one package's statement coverage.
type PackageCoverage struct {
	Package    string  `json:"package"`
	Statements int     `json:"statements"`
	Covered    int     `json:"covered"`
	Percent    float64 `json:"percent"`
	// UnreachedFunctions lists the functions none of whose statements ran
	// ("file.go:LINE:Name"); Unreached the line ranges never run
	// ("file.go:12-15"), in file and line order.
	UnreachedFunctions []string `json:"unreached_functions"`
	Unreached          []string `json:"unreached_lines"`
}

// block is one basic block of a coverage profile.
type block struct {
	file                                 string
	startLine, startCol, endLine, endCol int
	stmts                                int
	count                                int64
}

// ParseCoverProfile reads a Go coverage profile (`go tool covdata textfmt`,
// `go test -coverprofile`: "mode: set" then "FILE:L.C,L.C STMTS COUNT"
// lines) and returns the coverage of pkgs (import paths), each listed even
// when the profile has nothing of it. A block listed more than once (by
// several runs) counts as run when any run ran it.
func ParseCoverProfile(r io.Reader, pkgs []string) (*Coverage, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	blocks := map[[5]string]*block{}
	var order [][5]string
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if t == "" || line == 1 && strings.HasPrefix(t, "mode:") {
			continue
		}
		b, err := parseBlock(t)
		if err != nil {
			return nil, fmt.Errorf("coverage profile line %d: %v", line, err)
		}
		k := [5]string{b.file, strconv.Itoa(b.startLine), strconv.Itoa(b.startCol), strconv.Itoa(b.endLine), strconv.Itoa(b.endCol)}
		if old, ok := blocks[k]; ok {
			old.count += b.count
			continue
		}
		blocks[k] = b
		order = append(order, k)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	c := &Coverage{}
	for _, pkg := range pkgs {
		pc := PackageCoverage{Package: pkg, UnreachedFunctions: []string{}, Unreached: []string{}}
		var unrun []*block
		for _, k := range order {
			b := blocks[k]
			if pathpkg.Dir(b.file) != pkg {
				continue
			}
			pc.Statements += b.stmts
			if b.count > 0 {
				pc.Covered += b.stmts
			} else if b.stmts > 0 {
				unrun = append(unrun, b)
			}
		}
		if pc.Statements > 0 {
			pc.Percent = float64(int(1000*float64(pc.Covered)/float64(pc.Statements)+0.5)) / 10
		}
		pc.Unreached = lineRanges(unrun)
		c.Packages = append(c.Packages, pc)
	}
	return c, nil
}

func parseBlock(t string) (*block, error) {
	// FILE:L.C,L.C STMTS COUNT; FILE may hold colons, so cut at the last.
	colon := strings.LastIndexByte(t, ':')
	if colon < 0 {
		return nil, fmt.Errorf("%q: want FILE:L.C,L.C STMTS COUNT", t)
	}
	b := &block{file: t[:colon]}
	f := strings.Fields(t[colon+1:])
	if len(f) != 3 {
		return nil, fmt.Errorf("%q: want FILE:L.C,L.C STMTS COUNT", t)
	}
	if _, err := fmt.Sscanf(f[0], "%d.%d,%d.%d", &b.startLine, &b.startCol, &b.endLine, &b.endCol); err != nil {
		return nil, fmt.Errorf("%q: %v", f[0], err)
	}
	var err error
	if b.stmts, err = strconv.Atoi(f[1]); err != nil {
		return nil, fmt.Errorf("%q: %v", f[1], err)
	}
	if b.count, err = strconv.ParseInt(f[2], 10, 64); err != nil {
		return nil, fmt.Errorf("%q: %v", f[2], err)
	}
	return b, nil
}

// lineRanges renders blocks as "file.go:L-M" ranges, adjacent and
// overlapping ones joined.
func lineRanges(bs []*block) []string {
	slices.SortFunc(bs, func(a, b *block) int {
		if c := strings.Compare(a.file, b.file); c != 0 {
			return c
		}
		return a.startLine - b.startLine
	})
	out := []string{}
	for i := 0; i < len(bs); {
		f, lo, hi := bs[i].file, bs[i].startLine, bs[i].endLine
		j := i + 1
		for ; j < len(bs) && bs[j].file == f && bs[j].startLine <= hi+1; j++ {
			hi = max(hi, bs[j].endLine)
		}
		name := pathpkg.Base(f) + ":" + strconv.Itoa(lo)
		if hi > lo {
			name += "-" + strconv.Itoa(hi)
		}
		out = append(out, name)
		i = j
	}
	return out
}

// AddFuncCoverage reads `go tool cover -func` output ("FILE:LINE:\tNAME\tP%"
// lines, then a "total:" line) and lists, per package of c, the functions
// at 0.0%.
func (c *Coverage) AddFuncCoverage(r io.Reader) error {
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] == "total:" {
			continue
		}
		if len(f) != 3 || !strings.HasSuffix(f[2], "%") {
			return fmt.Errorf("cover -func line %d: %q: want FILE:LINE: NAME PERCENT", line, sc.Text())
		}
		if f[2] != "0.0%" {
			continue
		}
		file, line, _ := strings.Cut(strings.TrimSuffix(f[0], ":"), ":")
		for i := range c.Packages {
			if pathpkg.Dir(file) == c.Packages[i].Package {
				c.Packages[i].UnreachedFunctions = append(c.Packages[i].UnreachedFunctions, pathpkg.Base(file)+":"+line+":"+f[1])
			}
		}
	}
	return sc.Err()
}

// ReductionsOn names the reductions r's search used, as its report states
// them: what a "complete" relied on.
func (r *Report) ReductionsOn() []string {
	var red []string
	if r.Hashing {
		red = append(red, "state hashing")
	}
	if r.POR {
		red = append(red, "sleep sets")
	}
	if len(r.Symmetry) > 0 {
		red = append(red, "holder symmetry ("+strings.Join(r.Symmetry, ", ")+")")
	}
	if !r.Cloning {
		red = append(red, "states re-run from the root (a machine cannot copy itself)")
	}
	return red
}
