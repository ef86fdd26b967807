// Package servers starts the real servers leasecheck tests and `verify`
// run against — redis-server, PostgreSQL, ZooKeeper and an etcd server
// process — on free ports of 127.0.0.1, each with a data directory of its
// own that Close removes. It is test infrastructure, internal to the
// module: a third party's backend brings its own server.
//
// A started server is a *Process: SIGSTOP and SIGCONT freeze and resume
// its whole process group (Stop, Cont), and Restart kills it (SIGKILL, a
// crash) and starts it again on the same port and data, returning once it
// takes requests again. A Process therefore satisfies realrun.Server and
// realrun.Restarter, the coordinator-crash fault.
//
// Clusters (DESIGN.md §12): StartEtcdCluster starts several etcd members
// whose peer links all pass through leasecheck's labelled proxies
// (realrun.NewLabeledProxy), so links between members can be cut, one pair
// at a time or a member from all, and delayed; each member is a *Process,
// stopped, killed and restarted as a single server is.
//
// Index: process.go (Process, FreePort), redis.go (StartRedis),
// postgres.go (StartPostgres, PostgresBinDir), zookeeper.go
// (StartZooKeeper), etcd.go (StartEtcd), cluster.go (StartEtcdCluster,
// EtcdCluster). serverstest/ finds or starts them
// for tests (environment variables first; under CI=true a missing server
// fails the test instead of skipping it).
package servers
