package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// moduleFile is the release function's file as the module cache holds it
// for the client-go go.mod names.
func moduleFile(t *testing.T) []byte {
	t.Helper()
	dir, err := exec.Command("go", "list", "-f", "{{.Dir}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pkg, err)
	}
	src, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(dir)), "leaderelection.go"))
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// The change is the one condition, in the release function, and nothing
// else of the file.
func TestPatchChangesOneCondition(t *testing.T) {
	src := moduleFile(t)
	out, err := patch(src)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(out), fixed); got != 1 {
		t.Fatalf("the patched file has %d copies of the check, want 1", got)
	}
	if back := strings.Replace(string(out), fixed, anchor, 1); back != string(src) {
		t.Fatal("the patched file differs from the module's in more than the one condition")
	}
	body := string(out[strings.Index(string(out), "func (le *LeaderElector) tryRelease("):])
	if i := strings.Index(body, fixed); i < 0 || i > strings.Index(body, "\n}\n") {
		t.Fatal("the check is not in tryRelease")
	}
}

// Where the text it is written against is not there, it refuses: a file
// already fixed, a release without the Get, a release with no IsLeader
// check left to change.
func TestPatchRefusesOtherText(t *testing.T) {
	src := string(moduleFile(t))
	fixedSrc, err := patch([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{
		"already fixed": string(fixedSrc),
		"no Get":        strings.Replace(src, read, "oldLeaderElectionRecord, _, err := le.getRecord(ctx)", 1),
		"no release":    strings.Replace(strings.Replace(src, "func (le *LeaderElector) tryRelease(", "func (le *LeaderElector) letGo(", 1), "func (le *LeaderElector) release(", "func (le *LeaderElector) letGoAll(", 1),
		"no anchor":     strings.Replace(src, anchor, "\tif !le.isLeader() {\n\t\treturn true\n\t}\n", 1),
	} {
		if _, err := patch([]byte(s)); err == nil {
			t.Errorf("%s: patched", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

// The command writes flags that go build accepts for the package, and
// the marker it adds is there only with them: vclient/k8slease's patched
// tests (the clientgopatched tag), which name the marker, vet with the
// flags and fail to without them. It vets what make test-clientgo-patched
// vets, in the directory that uses too (the default), so that the second
// of the two builds of patched client-go is the build cache's.
func TestOverlayBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds client-go's leaderelection")
	}
	dir, err := run("")
	if err != nil {
		t.Fatal(err)
	}
	const patchedTests = "github.com/leasecheck/leasecheck/vclient/k8slease"
	cmd := exec.Command("go", "vet", "-tags", "clientgopatched", "-modfile="+filepath.Join(dir, "go.mod"), "-overlay="+filepath.Join(dir, "overlay.json"), patchedTests)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet -overlay: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "vet", "-tags", "clientgopatched", patchedTests).CombinedOutput()
	if err == nil || !strings.Contains(string(out), marker) {
		t.Fatalf("the patched tests vet without the overlay (%v): the marker is not what tells a patched build\n%s", err, out)
	}
}
