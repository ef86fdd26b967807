// Package servers starts, for tests of your own, the real servers
// leasecheck tests against: redis-server, PostgreSQL, an etcd server,
// ZooKeeper and nats-server (with JetStream). Each is a process of its
// own, on a free port of 127.0.0.1, with a data directory of its own that
// Close removes.
//
//	func TestMyLock(t *testing.T) {
//		srv := servers.ForTest(t, servers.StartRedis)
//		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
//		...
//	}
//
// ForTest stops the server when the test ends (t.Cleanup). When the
// server's program is not installed it skips the test and says which
// program is missing and how to install it — unless the environment sets
// CI, where a missing program is a missing install step and fails the
// test: a skipped check must not pass for a done one.
//
// The Start functions are the same without a test: a verify.Backend whose
// Open starts its own server sets the Server as the target's Server
// (verify.Opened.Target.Server), and verify's coordinator faults freeze,
// resume and crash it (Stop, Cont, Restart).
//
// These are leasecheck's own starters, the ones its tests and `leasecheck
// verify` use, with the same settings (Redis with an append-only file
// fsynced on every write, PostgreSQL with trust authentication,
// ZooKeeper with a 100 ms tick); where each looks for its program is
// named on each Start function.
package servers
