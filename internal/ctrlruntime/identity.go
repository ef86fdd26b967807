package ctrlruntime

import (
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"sync"

	"github.com/google/uuid"
)

// controller-runtime's default identity is os.Hostname() + "_" + a random
// UUID (pkg/leaderelection.NewResourceLock, k8s.io/apimachinery's
// uuid.NewUUID, which is github.com/google/uuid's New: 16 bytes from that
// package's source, crypto/rand unless uuid.SetRand says otherwise). The
// harness keeps the scheme and seeds its one random part: while a
// candidate's manager is built, uuid.SetRand points at a source drawn from
// the run's seed, the incarnation's name and how many managers it built
// before, so that a replay draws the same identity and no two managers of
// a run draw the same one (a manager rebuilt after losing its lease gets a
// new UUID, as a restarted pod's process does). uuid's source is
// process-wide: managers are built one at a time (identityMu), and runs of
// this client are one at a time in the process (vclient.RandUser).
var identityMu sync.Mutex

// identitySource is the source manager k of incarnation name draws its
// UUID from, in the run keyed by key.
func identitySource(key uint64, name string, k int) *counting {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", name, k)
	return &counting{r: rand.New(rand.NewPCG(key, h.Sum64()))}
}

// counting is an io.Reader of a seeded source that counts what it gave.
type counting struct {
	r *rand.Rand
	n int
}

func (c *counting) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(c.r.Uint32())
	}
	c.n += len(p)
	return len(p), nil
}

// withIdentity builds a manager (build) while controller-runtime's UUIDs
// come from manager k of incarnation name's seeded source, and returns
// the identity it drew: hostname_uuid, as controller-runtime makes it. It
// is an error if build drew anything but one UUID (a controller-runtime
// whose identity scheme changed: the harness would no longer know it).
func withIdentity(key uint64, name string, k int, build func(identity string) error) (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", err
	}
	u, err := uuid.NewRandomFromReader(identitySource(key, name, k))
	if err != nil {
		return "", err
	}
	id := host + "_" + u.String()
	src := identitySource(key, name, k)
	identityMu.Lock()
	uuid.SetRand(src)
	err = build(id)
	uuid.SetRand(nil)
	identityMu.Unlock()
	if err != nil {
		return "", err
	}
	if src.n != len(u) {
		return "", fmt.Errorf("controller-runtime drew %d random bytes building its manager, want %d (one UUID for its identity)", src.n, len(u))
	}
	return id, nil
}

var _ io.Reader = (*counting)(nil)
