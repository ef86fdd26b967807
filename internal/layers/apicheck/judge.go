package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// policySince is the first release under the deprecation policy
// (CHANGELOG.md): a name it or a later release deprecates lives at least
// two minor releases before it is deleted. Names deprecated earlier were
// deleted after one release, as planned when they were deprecated.
const policySince = "v0.16.0"

// change is one line of apidiff's report of incompatible changes: the
// package it is about (module-relative, "model"; "" when apidiff names a
// package outside the module), the name in it as make exported lists
// names ("Op.DescribeIn"; "" for the package itself), and what happened
// ("removed", "changed from ... to ...").
type change struct {
	Line     string
	Pkg      string
	Name     string
	What     string
	External bool // the object is in a package outside the module
}

// parseReport reads the lines `apidiff -m -incompatible` writes: "- OBJ:
// WHAT", OBJ "./PKG.NAME" for a name of the module's package PKG (a
// method "./PKG.(*T).M" or "./PKG.T.M"), "package PATH" for a whole
// package, or a full import path for a name of another module that a
// changed type reaches.
func parseReport(r io.Reader, module string) ([]change, error) {
	var out []change
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		body, ok := strings.CutPrefix(line, "- ")
		if !ok {
			return nil, fmt.Errorf("apidiff report line %d: %q is not \"- OBJECT: CHANGE\"", n, line)
		}
		obj, what, ok := strings.Cut(body, ": ")
		if !ok {
			return nil, fmt.Errorf("apidiff report line %d: %q has no \": \"", n, line)
		}
		c := change{Line: body, What: what}
		switch {
		case strings.HasPrefix(obj, "package "):
			path := strings.TrimPrefix(obj, "package ")
			rel, inModule := strings.CutPrefix(path, module+"/")
			c.Pkg, c.External = rel, !inModule
		case strings.HasPrefix(obj, "./"):
			c.Pkg, c.Name = splitObject(strings.TrimPrefix(obj, "./"))
		default:
			c.Pkg, c.Name = splitObject(obj)
			c.External = true
		}
		out = append(out, c)
	}
	return out, sc.Err()
}

// splitObject splits "impl/backend.Info.Fences" into the package path and
// the name, and writes a method's receiver as make exported does:
// "(*Op).DescribeIn" is "Op.DescribeIn", "(*Set[K]).Add" is "Set.Add".
func splitObject(s string) (pkg, name string) {
	slash := strings.LastIndex(s, "/")
	dot := strings.Index(s[slash+1:], ".")
	if dot < 0 {
		return s, ""
	}
	pkg, name = s[:slash+1+dot], s[slash+2+dot:]
	name = strings.NewReplacer("(*", "", "(", "", ")", "").Replace(name)
	return pkg, typeArgs.ReplaceAllString(name, "")
}

var typeArgs = regexp.MustCompile(`\[[^\]]*\]`)

// allowed is one line of the allow-list: a name deleted after it was
// deprecated, and the release that deprecated it.
type allowed struct {
	Pkg, Name string
	Since     string
	Line      int
}

// parseAllow reads the allow-list: a line per deleted name, "PKG.NAME
// RELEASE" (model.Op.DescribeIn v0.15.0), the package as make exported
// names it; # starts a comment. Errors name the file and line.
func parseAllow(r io.Reader, file string, doors []string) ([]allowed, error) {
	var out []allowed
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		bad := func(why string) error { return fmt.Errorf("%s:%d: %s", file, n, why) }
		if len(f) != 2 {
			return nil, bad(fmt.Sprintf("%q: want \"PACKAGE.NAME RELEASE\" (model.Op.DescribeIn v0.15.0)", strings.TrimSpace(line)))
		}
		if _, _, ok := minorOf(f[1]); !ok {
			return nil, bad(fmt.Sprintf("%q is not a release (vMAJOR.MINOR.PATCH)", f[1]))
		}
		pkg, name := "", ""
		for _, d := range doors { // the longest door that prefixes it: vclient/k8slease before vclient
			if rest, ok := strings.CutPrefix(f[0], d+"."); ok && len(d) > len(pkg) {
				pkg, name = d, rest
			}
		}
		if pkg == "" || name == "" {
			return nil, bad(fmt.Sprintf("%q names no door's name (doors: %s)", f[0], strings.Join(doors, ", ")))
		}
		out = append(out, allowed{Pkg: pkg, Name: name, Since: f[1], Line: n})
	}
	return out, sc.Err()
}

var release = regexp.MustCompile(`^v(\d+)\.(\d+)\.(\d+)$`)

// minorOf returns a release's major and minor numbers.
func minorOf(tag string) (major, minor int, ok bool) {
	m := release.FindStringSubmatch(tag)
	if m == nil {
		return 0, 0, false
	}
	major, _ = strconv.Atoi(m[1])
	minor, _ = strconv.Atoi(m[2])
	return major, minor, true
}

// minorsBetween is how many minor releases b is after a (same major).
func minorsBetween(a, b string) int {
	amaj, amin, _ := minorOf(a)
	bmaj, bmin, _ := minorOf(b)
	if amaj != bmaj {
		return 1 << 30
	}
	return bmin - amin
}

// houseTypeChanged reports whether what ("changed from OLD to NEW") says
// a name's old type was one of the module's internal packages': a type no
// user could name, so a door that now hands out a type of its own in its
// place breaks only code that used its fields (the allow-list still has to
// name it, and CHANGELOG.md to say so).
func houseTypeChanged(what string) bool {
	old, ok := strings.CutPrefix(what, "changed from ")
	if !ok {
		return false
	}
	old, _, _ = strings.Cut(old, " to ")
	return strings.Contains(old, "/internal/")
}

// verdict is what judge found.
type verdict struct {
	Problems []string // each fails the check
	Allowed  []string // deletions of deprecated names the allow-list names
	Ignored  []string // changes outside the doors (commands, examples)
}

// judge holds apidiff's incompatible changes against the tree to the
// rules: a door may lose a name only if the allow-list names it, the
// baseline deprecated it (deprecated: the baseline's names with a
// "Deprecated:" paragraph, per package, as make exported lists them) and,
// for a deprecation under the policy, it was deprecated at least one
// minor release before the baseline (so it lived two: the one that
// deprecated it and the baseline). Any other incompatible change of a
// door, or of a house type a door hands out, fails; so does an allow-list
// entry that is no removal (stale once the baseline moves on). A listed
// name may also change, where it was deprecated (replaced by a name of
// its own) or where its old type was internal (houseTypeChanged).
func judge(changes []change, allow []allowed, deprecated map[string][]string, baseline string, doors []string) verdict {
	var v verdict
	used := make([]bool, len(allow))
	for _, c := range changes {
		isDoor := slices.Contains(doors, c.Pkg)
		house := c.Pkg == "internal" || strings.HasPrefix(c.Pkg, "internal/") || strings.Contains(c.Pkg, "/internal/")
		switch {
		case c.External:
			v.Problems = append(v.Problems, c.Line+" (a type of another module a door hands out changed)")
			continue
		case house:
			v.Problems = append(v.Problems, c.Line+" (a house type a door hands out changed)")
			continue
		case !isDoor:
			v.Ignored = append(v.Ignored, c.Line)
			continue
		}
		if c.Name == "" {
			v.Problems = append(v.Problems, c.Line+" (a door is gone)")
			continue
		}
		i := slices.IndexFunc(allow, func(a allowed) bool { return a.Pkg == c.Pkg && a.Name == c.Name })
		if i < 0 {
			why := "not on the allow-list"
			if c.What == "removed" && slices.Contains(deprecated[c.Pkg], c.Name) {
				why += fmt.Sprintf("; %s deprecated it: if this is its planned deletion, list \"%s.%s RELEASE\" with the release that deprecated it", baseline, c.Pkg, c.Name)
			}
			v.Problems = append(v.Problems, c.Line+" ("+why+")")
			continue
		}
		used[i] = true
		a := allow[i]
		full := c.Pkg + "." + c.Name
		switch {
		case c.What != "removed" && houseTypeChanged(c.What):
			v.Allowed = append(v.Allowed, fmt.Sprintf("%s (its type was leasecheck's internal one, which a user could not name; now the door's own)", full))
		case c.What != "removed" && !slices.Contains(deprecated[c.Pkg], c.Name):
			v.Problems = append(v.Problems, fmt.Sprintf("%s (the allow-list lets a deprecated name be removed, or a name whose type was internal change, not this)", c.Line))
		case c.What != "removed":
			v.Allowed = append(v.Allowed, fmt.Sprintf("%s (deprecated in %s, replaced by the door's own)", full, a.Since))
		case !slices.Contains(deprecated[c.Pkg], c.Name):
			v.Problems = append(v.Problems, fmt.Sprintf("%s (%s was not deprecated in %s: deprecate it, and delete it at least two minor releases later)", c.Line, full, baseline))
		case minorsBetween(a.Since, baseline) < 0:
			v.Problems = append(v.Problems, fmt.Sprintf("%s (the allow-list says %s deprecated it, after the baseline %s)", c.Line, a.Since, baseline))
		case minorsBetween(policySince, a.Since) >= 0 && minorsBetween(a.Since, baseline) < 1:
			v.Problems = append(v.Problems, fmt.Sprintf("%s (deprecated in %s: it lives at least two minor releases, so the release after %s may not delete it yet)", c.Line, a.Since, baseline))
		default:
			v.Allowed = append(v.Allowed, fmt.Sprintf("%s (deprecated in %s)", full, a.Since))
		}
	}
	for i, a := range allow {
		if !used[i] {
			v.Problems = append(v.Problems, fmt.Sprintf("allow-list line %d: %s.%s is not removed against %s (an entry from an earlier release: delete it)", a.Line, a.Pkg, a.Name, baseline))
		}
	}
	return v
}
