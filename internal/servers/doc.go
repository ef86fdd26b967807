// Package servers starts the real servers leasecheck tests and `verify`
// run against — redis-server, PostgreSQL, ZooKeeper and an etcd server
// process — on free ports of 127.0.0.1, each with a data directory of its
// own that Close removes. A module outside leasecheck starts them
// through leasetest/servers, which wraps the single-server starters.
//
// A started server is a *Process: SIGSTOP and SIGCONT freeze and resume
// its whole process group (Stop, Cont), and Restart kills it (SIGKILL, a
// crash) and starts it again on the same port and data, returning once it
// takes requests again. A Process therefore satisfies realrun.Server and
// realrun.Restarter, the coordinator-crash fault.
//
// Clusters (docs/design.md §12): StartEtcdCluster starts several etcd members
// whose peer links all pass through leasecheck's labelled proxies
// (tcpproxy.NewLabeled), so links between members can be cut, one pair
// at a time or a member from all, and delayed; each member is a *Process,
// stopped, killed and restarted as a single server is. StartEtcdClusterOf
// takes the member program (EtcdProgram): the installed etcd 3.4, or the
// embedded 3.7 server run as a child process (internal/etcdmember), one
// implementation for both.
// StartZooKeeperEnsemble does the same for ZooKeeper: each server's own
// zoo.cfg names every other server at proxies of its own, so each pair's
// link is cut at its proxies. Both satisfy realrun.Cluster (the cluster
// faults, the leader from the servers' own status: etcd's Status, srvr).
// A cut between members is a partition that refuses (tcpproxy.Proxy's
// Reject): open connections are reset at once and new ones as they
// arrive, so both sides see it as TCP sees a route that went away.
// (Blackholing instead — accept, then pass nothing — left a ZooKeeper
// 3.8.0 ensemble without a leader for more than 30 s when its leader was
// isolated: the followers' election messages went into connections that
// looked alive.)
//
// A server's own account of a finding: LEASECHECK_SERVER_LOGS=DIR keeps
// every server's output in DIR when it is closed (LogsEnv), and
// LEASECHECK_ZK_LOG=info makes ZooKeeper log its elections and syncs.
// ZooKeeper 3.8.0 loses acknowledged transactions when a lagging follower
// resumes just as its leader dies (ZOOKEEPER-4643/4685):
// TestZooKeeperEnsembleLostCommits drives that schedule under
// LEASECHECK_SOAK=1 and tells ZooKeeper's loss, marked in its own log,
// from any other.
//
// Index: process.go (Process, FreePort), redis.go (StartRedis),
// postgres.go (StartPostgres, PostgresBinDir), zookeeper.go
// (StartZooKeeper), etcd.go (StartEtcd, EtcdProgram), cluster.go (StartEtcdCluster,
// StartEtcdClusterOf, EtcdCluster), sockowner.go (which member dialled a peer connection),
// ensemble.go (StartZooKeeperEnsemble), nats.go (StartNATS,
// StartNATSCluster: nats-server embedded in this process), natsprocess.go
// (StartNATSProcess: the installed nats-server as a Process, for
// leasetest/servers). serverstest/ finds or starts them
// for tests (environment variables first; under CI=true a missing server
// fails the test instead of skipping it).
package servers
