// Package etcdmember runs the etcd server leasecheck embeds (the module's
// go.etcd.io/etcd/server/v3, 3.7) as a child process with etcd's own
// command line, so a cluster of several 3.7 members can be started,
// paused (SIGSTOP), killed and restarted like the installed etcd's: each
// member a process of its own, as in production, rather than several
// servers sharing one process whose pause would freeze them all.
//
// The program is the running binary itself with the hidden subcommand
// etcd-server: `leasecheck etcd-server --name m1 --data-dir ...` is
// etcdmain.Main, the etcd command line. An installed leasecheck so needs
// no etcd binary and no Go toolchain. A binary dispatches the subcommand
// by calling Dispatch first thing in main (or in TestMain, for a test
// binary that starts 3.7 clusters); Program refuses to name a binary that
// does not, which would otherwise take the subcommand for something else
// (a test binary would run its tests again, recursively).
package etcdmember
