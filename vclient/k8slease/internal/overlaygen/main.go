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
	"crypto/sha256"
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
	out := flag.String("dir", "", "directory for the patched file and the overlay (default: one in the user's cache, named by the module, client-go and the change, reused by later runs)")
	flag.Parse()
	dir, err := run(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "overlaygen:", err)
		os.Exit(2)
	}
	fmt.Printf("-modfile=%s -overlay=%s\n", filepath.Join(dir, "go.mod"), filepath.Join(dir, "overlay.json"))
}

// run writes the flags' files (go.mod, go.sum, the patched file, the marker
// and overlay.json) and returns the directory that holds them.
func run(out string) (string, error) {
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	if err != nil {
		return "", fmt.Errorf("go list -m %s: %v", module, err)
	}
	gm, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %v", err)
	}
	modDir, mainMod := strings.TrimSpace(string(dir)), strings.TrimSpace(string(gm))
	file := filepath.Join(modDir, rel, "leaderelection.go")
	src, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	patched, err := patch(src)
	if err != nil {
		return "", fmt.Errorf("%s: %v", file, err)
	}
	if out == "" {
		return shared(modDir, mainMod, patched)
	}
	if out, err = filepath.Abs(out); err != nil {
		return "", err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	return out, writeFiles(out, out, modDir, mainMod, patched)
}

// shared writes the flags' files once for a given main module, client-go
// directory and patched text, in a directory of the user's cache named by
// them, and reuses it after: go's build cache keys a package's compilation
// by its directory, so the same path each time lets a second build of
// patched client-go (the overlay's own test, then make
// test-clientgo-patched; a developer's next run) reuse the first one's
// minutes of compiling. Concurrent runs each write a directory of their own
// and rename it into place; the loser uses the winner's, which holds the
// same bytes.
func shared(modDir, mainMod string, patched []byte) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", modDir, mainMod)
	for _, f := range []string{mainMod, strings.TrimSuffix(mainMod, ".mod") + ".sum"} {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%d\x00", len(b))
		h.Write(b)
	}
	h.Write(patched)
	final := filepath.Join(cache, "leasecheck", fmt.Sprintf("clientgo-overlay-%x", h.Sum(nil)[:8]))
	if _, err := os.Stat(filepath.Join(final, "overlay.json")); err == nil {
		return final, nil
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(final), "tmp-")
	if err != nil {
		return "", err
	}
	if err := writeFiles(tmp, final, modDir, mainMod, patched); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		os.RemoveAll(tmp)
		if _, serr := os.Stat(filepath.Join(final, "overlay.json")); serr != nil {
			return "", err
		}
	}
	return final, nil
}

// writeFiles writes into dir the files whose paths name at, where they will
// be read from (dir itself, or the directory dir is renamed to).
func writeFiles(dir, at, modDir, mainMod string, patched []byte) error {
	out, link := dir, filepath.Join(at, "client-go")
	if err := os.Remove(filepath.Join(out, "client-go")); err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := os.Symlink(modDir, filepath.Join(out, "client-go")); err != nil {
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
	if err := os.WriteFile(filepath.Join(out, "go.mod"), gomod, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "go.sum"), gosum, 0o644); err != nil {
		return err
	}
	mark := fmt.Sprintf("package leaderelection\n\n// %s is added by leasecheck's overlay: tryRelease checks the record it read.\nconst %s = true\n", marker, marker)
	if err := os.WriteFile(filepath.Join(out, "leaderelection.go"), patched, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "zz_leasecheck_marker.go"), []byte(mark), 0o644); err != nil {
		return err
	}
	ov, err := json.MarshalIndent(map[string]map[string]string{"Replace": {
		filepath.Join(link, rel, "leaderelection.go"):       filepath.Join(at, "leaderelection.go"),
		filepath.Join(link, rel, "zz_leasecheck_marker.go"): filepath.Join(at, "zz_leasecheck_marker.go"),
	}}, "", "\t")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "overlay.json"), append(ov, '\n'), 0o644)
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
