// Command overlaygen writes the build flags that change one condition of
// client-go's tools/leaderelection, as the module cache holds it for the
// version go.mod names: tryRelease (release before v0.37) returns without
// clearing the Lease unless the record its Lock.Get just read names this
// elector — the check client-go v0.38.0-beta.0 makes. The k8slease tests
// built with them and the clientgopatched tag run the release variants on
// that build (make test-clientgo-patched):
//
//	go test -tags clientgopatched $(go run ./vclient/k8slease/internal/overlaygen) -run Patched ./vclient/k8slease/
//
// go refuses an overlay of a file beneath GOMODCACHE, so the module is
// reached through a symbolic link to its directory in the cache (a
// replace in a copy of go.mod, -modfile), and the overlay changes the
// file at that path: nothing of client-go is copied, the one file the
// overlay names is the module's own with the one condition changed.
//
// It prints the flags (-modfile=... -overlay=...). If the function is not there in the
// form this change is written against (a client-go that already checks the
// record read, or whose release changed otherwise), it exits 2 naming the
// file: the change is re-derived then, never applied blind.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const (
	module = "k8s.io/client-go"
	rel    = "tools/leaderelection" // the package, in the module
	pkg    = module + "/" + rel
)

// Marker is the name the overlay adds to the package, in a file of its own,
// so that the tests built with the clientgopatched tag fail to compile
// without the overlay instead of running unpatched client-go as patched.
const marker = "LeasecheckPatchedRelease"

// The text the change is written against, inside the release function:
// the record read by Lock.Get, then the identity check against the cached
// observedRecord only.
const (
	read   = "oldLeaderElectionRecord, _, err := le.config.Lock.Get(ctx)"
	anchor = "\tif !le.IsLeader() {\n\t\treturn true\n\t}\n"
	fixed  = "\tif !le.IsLeader() || oldLeaderElectionRecord.HolderIdentity != le.config.Lock.Identity() {\n\t\treturn true\n\t}\n"
)

func main() {
	out := flag.String("dir", "", "directory for the patched file and the overlay (default: a new temporary directory)")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "overlaygen:", err)
		os.Exit(2)
	}
}

func run(out string) error {
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	if err != nil {
		return fmt.Errorf("go list -m %s: %v", module, err)
	}
	gm, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("go env GOMOD: %v", err)
	}
	modDir, mainMod := strings.TrimSpace(string(dir)), strings.TrimSpace(string(gm))
	file := filepath.Join(modDir, rel, "leaderelection.go")
	src, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	patched, err := patch(src)
	if err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	if out == "" {
		if out, err = os.MkdirTemp("", "leasecheck-overlay-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	out, err = filepath.Abs(out)
	if err != nil {
		return err
	}
	link := filepath.Join(out, "client-go")
	if err := os.Remove(link); err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := os.Symlink(modDir, link); err != nil {
		return err
	}
	gomod, err := os.ReadFile(mainMod)
	if err != nil {
		return err
	}
	gosum, err := os.ReadFile(strings.TrimSuffix(mainMod, ".mod") + ".sum")
	if err != nil {
		return err
	}
	gomod = fmt.Appendf(gomod, "\nreplace %s => %s\n", module, link)
	modfile := filepath.Join(out, "go.mod")
	if err := os.WriteFile(modfile, gomod, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "go.sum"), gosum, 0o644); err != nil {
		return err
	}
	pf := filepath.Join(out, "leaderelection.go")
	mf := filepath.Join(out, "zz_leasecheck_marker.go")
	mark := fmt.Sprintf("package leaderelection\n\n// %s is added by leasecheck's overlay: tryRelease checks the record it read.\nconst %s = true\n", marker, marker)
	if err := os.WriteFile(pf, patched, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(mf, []byte(mark), 0o644); err != nil {
		return err
	}
	ov, err := json.MarshalIndent(map[string]map[string]string{"Replace": {
		filepath.Join(link, rel, "leaderelection.go"):       pf,
		filepath.Join(link, rel, "zz_leasecheck_marker.go"): mf,
	}}, "", "\t")
	if err != nil {
		return err
	}
	of := filepath.Join(out, "overlay.json")
	if err := os.WriteFile(of, append(ov, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Printf("-modfile=%s -overlay=%s\n", modfile, of)
	return nil
}

// patch applies the one change to the release function's body: exactly one
// anchor, after the Get whose record it checks, and no check of that record
// already there.
func patch(src []byte) ([]byte, error) {
	start := -1
	for _, fn := range []string{"\nfunc (le *LeaderElector) tryRelease(", "\nfunc (le *LeaderElector) release("} {
		if i := bytes.Index(src, []byte(fn)); i >= 0 {
			start = i
			break
		}
	}
	if start < 0 {
		return nil, fmt.Errorf("no tryRelease or release method of LeaderElector")
	}
	n := bytes.Index(src[start+1:], []byte("\n}\n"))
	if n < 0 {
		return nil, fmt.Errorf("the release function has no end")
	}
	body := string(src[start : start+1+n+3])
	if strings.Contains(body, "oldLeaderElectionRecord.HolderIdentity") {
		return nil, fmt.Errorf("the release function already checks the holder of the record it read: this client-go needs no overlay")
	}
	g := strings.Index(body, read)
	if g < 0 {
		return nil, fmt.Errorf("the release function does not read the Lease with %q: the change is written against v0.34-v0.37", read)
	}
	if c := strings.Count(body, anchor); c != 1 {
		return nil, fmt.Errorf("the release function has %d copies of the IsLeader check %q, want 1", c, anchor)
	}
	if strings.Index(body, anchor) < g {
		return nil, fmt.Errorf("the IsLeader check comes before the Lock.Get it should read")
	}
	body = strings.Replace(body, anchor, fixed, 1)
	return append(append(append([]byte{}, src[:start]...), body...), src[start+1+n+3:]...), nil
}
