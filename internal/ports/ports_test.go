package ports

import (
	"errors"
	"testing"
)

// A cluster start that lost a port to another process is tried again (at
// most three times); any other failure is returned at once.
func TestRetryTaken(t *testing.T) {
	calls := 0
	v, err := RetryTaken(func() (int, error) {
		calls++
		if calls < 3 {
			return 0, errors.New("etcd m2 exited during start-up:\n... listen tcp 127.0.0.1:40123: bind: address already in use")
		}
		return 7, nil
	})
	if v != 7 || err != nil || calls != 3 {
		t.Errorf("port taken twice: %d, %v after %d calls; want 7, nil after 3", v, err, calls)
	}
	calls = 0
	_, err = RetryTaken(func() (int, error) {
		calls++
		return 0, errors.New("java.net.BindException: Address already in use")
	})
	if err == nil || calls != 3 {
		t.Errorf("port always taken: %v after %d calls; want the error after 3", err, calls)
	}
	calls = 0
	_, err = RetryTaken(func() (int, error) {
		calls++
		return 0, errors.New("zookeeper s1 did not answer srvr: context deadline exceeded")
	})
	if err == nil || calls != 1 {
		t.Errorf("another failure: %v after %d calls; want it returned at once", err, calls)
	}
}

func TestFreeNDifferent(t *testing.T) {
	for range 50 {
		ps, err := FreeN(9)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int]bool{}
		for _, p := range ps {
			if seen[p] || p <= 0 {
				t.Fatalf("FreeN(9) = %v: a port twice or none", ps)
			}
			seen[p] = true
		}
	}
}
