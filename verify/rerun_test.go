package verify

import (
	"path/filepath"
	"testing"
)

// A replay line starts with a command the user can type again: the path
// as typed, the bare name of an installed program, and for a binary `go
// run` built into its temporary directory (gone when it exits, on nobody's
// PATH) `go run` of the main package.
func TestRerunFor(t *testing.T) {
	goRun := filepath.Join("/tmp", "go-build123", "b001", "exe", "redislock-verify")
	if !builtByGoRun(goRun) {
		t.Errorf("%s: not seen as built by go run", goRun)
	}
	if got := rerunFor(goRun, goRun); got == "" || got[:len("go run ")] != "go run " {
		t.Errorf("rerunFor(%s) = %q, want go run PKG", goRun, got)
	}
	for _, c := range []struct{ exe, arg0, want string }{
		{"/usr/local/bin/redislock-verify", "redislock-verify", ""},
		{"/home/u/bin/redislock-verify", "./bin/redislock-verify", "./bin/redislock-verify"},
		{"/home/u/my dir/x", "/home/u/my dir/x", "'/home/u/my dir/x'"},
		{"/tmp/exe/x", "x", ""}, // an exe directory that go run did not make
	} {
		if builtByGoRun(c.exe) {
			t.Errorf("%s: seen as built by go run", c.exe)
		}
		if got := rerunFor(c.exe, c.arg0); got != c.want {
			t.Errorf("rerunFor(%q, %q) = %q, want %q", c.exe, c.arg0, got, c.want)
		}
	}
	if got := (&Command{Name: "leasecheck verify"}).rerunName(); got != "leasecheck verify" {
		t.Errorf("a Command's replay lines start %q, want its Name", got)
	}
}
