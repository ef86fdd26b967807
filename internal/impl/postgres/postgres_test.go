package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/impl/postgres"
	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/internal/servers/serverstest"
	"github.com/leasecheck/leasecheck/leasetest"
)

func target(t *testing.T) realrun.Target {
	url, srv := serverstest.PostgresControlled(t)
	addr, err := postgres.Addr(url)
	if err != nil {
		t.Fatal(err)
	}
	p := serverstest.Prefix()
	return realrun.Target{
		Info: postgres.Info(), Addr: addr, Server: srv,
		Open: func(ctx context.Context, addr string) (backend.Backend, error) {
			return postgres.Open(ctx, url, addr, p)
		},
	}
}

// TestPostgresAllFaults: the PostgreSQL backend is judged correct with every
// applicable fault kind injected.
func TestPostgresAllFaults(t *testing.T) {
	tg := target(t)
	_, cr := serverstest.Check(t, tg, realrun.Config{Seed: 1, Duration: 8 * time.Second, Faults: realrun.ApplicableKinds(tg, faults.AllKinds)})
	serverstest.ExpectOK(t, cr)
}

// TestPostgresConformance runs the leasetest suite against PostgreSQL.
func TestPostgresConformance(t *testing.T) {
	url, _ := serverstest.Postgres(t)
	leasetest.Run(t, func() (backend.Backend, func(), error) {
		b, err := postgres.Open(context.Background(), url, "", serverstest.Prefix())
		if err != nil {
			return nil, nil, err
		}
		return b, func() { b.Cleanup(context.Background()); b.Close() }, nil
	}, leasetest.Options{Info: postgres.Info(), TTL: time.Second})
}
