// Command leasecheck finds the bugs distributed leases are famous for, and
// proves their absence where it can.
//
// Usage:
//
//	leasecheck check [--json] [--html FILE] [--timeout D] FILE|-
//	leasecheck run [--seeds N [--first S] [--shard I/N] | --seed S] [--faults LIST] [--mutant NAME] [--out DIR] [--fail-fast] [--json]
//	leasecheck repro SEED|SCENARIO.json [--mutant NAME] [--faults LIST] [--history FILE] [--trace] [--json]
//	leasecheck explore [--holders N] [--faults LIST] [--mutant NAME] [--coverage DIR] [--shard I/N --part FILE] [--json]
//	leasecheck merge [--out DIR] [--text] SUMMARY.json...|PART.json...
//	leasecheck mutants [--json]
//	leasecheck verify --backend etcd|etcd-mutex|redis://HOST:PORT|postgres://... [--duration D] [--faults LIST] [--out DIR] [--json]
//	leasecheck help [COMMAND]
//	leasecheck version
//
// check judges a recorded history (format v1, docs/specification.md §4) for the six
// history properties. run generates scenarios with faults, runs them
// against the reference implementation (or a planted bug, --mutant) in the
// deterministic simulator and judges every property of every run (package
// campaign); failing seeds are shrunk and saved so that repro replays them
// with no other flag. --shard runs one part of a sweep; merge combines the
// parts' --json summaries into the whole's, byte for byte. explore
// enumerates every run within bounds (package explore); explore --shard
// explores one part of it, and merge combines the parts' files into the
// unsharded exploration's verdict (explore_shard.go, merge_explore.go);
// --coverage re-runs it in a build with coverage (explore_coverage.go). mutants lists
// the planted bugs. verify runs the workload and faults for real against a
// lease backend (embedded etcd by default, Redis, PostgreSQL) and checks it.
//
// A hidden subcommand, `leasecheck etcd-server ETCD-FLAGS`, is the embedded
// etcd 3.7 server's own command line (internal/etcdmember): the program
// of each member of verify's etcd37-cluster, so the installed binary needs
// no etcd and no Go toolchain for a 3.7 cluster.
//
// Exit status: 0 every property holds, 1 a property is violated, 2 the
// input or command line cannot be used (the message names the file, line
// and reason), 3 a search ran out of its budget.
//
// Files: main.go dispatches, prints help and the examples; each subcommand
// lives in its own file and registers itself. The work is in package
// campaign; this command keeps flags and printing.
package main
