// Package fuzzing is what `make fuzz` runs: it finds the module's Go fuzz
// targets (every func FuzzXxx(*testing.F) in a _test.go file), says which
// has no committed seed corpus (testdata/fuzz/FuzzXxx/ beside the test, in
// Go's corpus format: `go test` runs those seeds on every run, and the
// fuzzer starts from them), and reads the fuzzer's progress lines into how
// much each target executed and for how long it kept moving. Command
// fuzzall runs every target in turn and prints that as a table.
package fuzzing
