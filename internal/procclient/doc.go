// Package procclient runs one owner's client — a user's adapter with the
// library inside it, or leasecheck's own — in an OS process of its own, a
// child of the test binary or of the command, so that a pause is what the
// world does to a process: SIGSTOP stops its goroutines, timers and GC
// alike, and at SIGCONT everything that fell due fires in whatever order
// the runtime picks; a crash is SIGKILL.
//
// The child is the parent's own executable re-executed, as Go test helpers
// are: an environment variable names the client to run, and the child's
// init (or TestMain, or main) registers that client's opener by name
// (Register), which serves it in place and exits. Parent and child talk
// over the child's stdin and stdout, one JSON message a line (wire.go);
// the child's own writes to stdout go to its stderr.
//
// The parent records when the kernel reports the child stopped and running
// again (wait4 with WUNTRACED and WCONTINUED): Client.Stops is that record,
// and it — not the name of the fault the harness meant — is what a judge
// may excuse. It also counts what the child sends: every request it makes
// of a service the parent serves it over the pipe, and every background
// renewal its library reports.
//
// Owners gives each owner a client of its own, so that stopping one
// owner's process stops nothing of another's.
//
// Index: wire.go (the messages), parent.go (Client, Start), child.go
// (Register, the child's loop), owners.go (Owners).
package procclient
