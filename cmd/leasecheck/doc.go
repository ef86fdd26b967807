// Command leasecheck finds the bugs distributed leases are famous for, and
// proves their absence where it can.
//
// Usage:
//
//	leasecheck check [--json] [--html FILE] [--timeout D] FILE|-
//	leasecheck run [--seeds N | --seed S] [--faults LIST] [--out DIR] [--json]
//	leasecheck repro SEED|SCENARIO.json [--history FILE]
//	leasecheck run --mutant NAME [--seeds N]
//	leasecheck mutants [--json]
//	leasecheck verify --backend etcd|etcd-mutex|redis://HOST:PORT|postgres://... [--duration D] [--faults LIST] [--out DIR] [--json]
//
// check judges a recorded history (format v1, DESIGN.md §4) for the four
// properties: linearizable, single-writer-per-fence, fence-monotonic and
// stop-on-renew-failure. run generates scenarios with faults and runs them
// against the reference lease implementation in the deterministic
// simulator, checking every history; repro replays one run exactly.
// mutants lists the planted bugs (impl/mutants) and run --mutant runs one.
// verify runs the same workload and faults for real against a lease
// backend (embedded etcd by default, Redis, PostgreSQL) and checks it.
//
// Exit status: 0 every property holds, 1 a property is violated, 2 the
// input or command line cannot be used (the message names the file, line
// and reason), 3 the linearizability search ran out of its budget.
//
// Files: main.go dispatches; each subcommand lives in its own file and
// registers itself.
package main
