package servers_test

import (
	"os"
	"testing"

	"github.com/leasecheck/leasecheck/internal/etcdmember"
)

// TestMain lets this test binary be an etcd 3.7 member (etcd-server, as the
// leasecheck binary is): TestEtcd37Cluster's members are this binary, so no
// separate program is built and the member runs the same dispatch an
// installed leasecheck does.
func TestMain(m *testing.M) {
	etcdmember.Dispatch()
	os.Exit(m.Run())
}
