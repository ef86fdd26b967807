// Package postgres is the PostgreSQL lease backend: a lease table on the
// server's clock, one PL/pgSQL function per operation.
//
// Everything lives in one schema per run (its prefix), dropped at the end:
//
//   - lease(k, owner, fence, exp, data): one row per lease key. Every
//     function first makes sure the row exists (INSERT ... ON CONFLICT DO
//     NOTHING, which waits for a concurrent insert of the same key), locks
//     it (FOR UPDATE; FOR SHARE for read), then reads clock_timestamp() in
//     microseconds: the clock is read under the row lock, so along each key
//     the commit order is the order of the clock readings, and `at` is
//     exactly the clock the decision used (exact mode, docs/specification.md §3). A
//     read without the row lock could take its snapshot before a write
//     committed and its clock after it: a false alarm (seen, and fixed).
//   - fence: a sequence; acquire takes nextval. Fences only grow and have
//     gaps (a rolled-back or lost transaction burns a number; one sequence
//     serves every key): model.Increasing.
//   - The fenced write is a conditional UPDATE: SET data WHERE owner = $o
//     AND fence = $f AND exp > clock. Renew and release are conditional
//     UPDATEs on owner and fence; release checks no deadline (the seed
//     semantics of reference/lease.py).
package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/model"
)

// Info describes the backend.
func Info() backend.Info {
	return backend.Info{
		Name:        "postgres",
		FenceSource: "nextval of the run's sequence inside the acquire function (increasing, with gaps)",
		FencedWrite: "UPDATE lease SET data WHERE owner = $o AND fence = $f AND exp > clock_timestamp(), under the row lock",
		Fences:      backend.IncreasingFences,
		Writes:      backend.CheckedWrites,
		ServerTime:  true,
	}
}

const ddl = `
CREATE TABLE IF NOT EXISTS %[1]s.lease (k text PRIMARY KEY, owner text, fence bigint NOT NULL DEFAULT 0, exp bigint NOT NULL DEFAULT 0, data text);
CREATE SEQUENCE IF NOT EXISTS %[1]s.fence;
CREATE OR REPLACE FUNCTION %[1]s.now_us() RETURNS bigint LANGUAGE sql VOLATILE AS
  $$ SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint $$;

CREATE OR REPLACE FUNCTION %[1]s.acquire(p_k text, p_o text, p_ttl bigint, OUT ok bool, OUT fence bigint, OUT reason text, OUT at bigint)
LANGUAGE plpgsql AS $$
DECLARE r %[1]s.lease;
BEGIN
  INSERT INTO %[1]s.lease(k) VALUES (p_k) ON CONFLICT DO NOTHING;
  SELECT * INTO r FROM %[1]s.lease l WHERE l.k = p_k FOR UPDATE;
  at := %[1]s.now_us();
  IF r.owner IS NOT NULL AND at < r.exp THEN
    ok := false; fence := 0; reason := 'held'; RETURN;
  END IF;
  fence := nextval('%[1]s.fence');
  UPDATE %[1]s.lease l SET owner = p_o, fence = acquire.fence, exp = at + p_ttl WHERE l.k = p_k;
  ok := true; reason := '';
END $$;

CREATE OR REPLACE FUNCTION %[1]s.renew(p_k text, p_o text, p_f bigint, p_ttl bigint, OUT ok bool, OUT reason text, OUT at bigint)
LANGUAGE plpgsql AS $$
DECLARE r %[1]s.lease;
BEGIN
  INSERT INTO %[1]s.lease(k) VALUES (p_k) ON CONFLICT DO NOTHING;
  SELECT * INTO r FROM %[1]s.lease l WHERE l.k = p_k FOR UPDATE;
  at := %[1]s.now_us();
  UPDATE %[1]s.lease l SET exp = at + p_ttl WHERE l.k = p_k AND l.owner = p_o AND l.fence = p_f AND l.exp > at;
  ok := FOUND;
  reason := CASE WHEN ok THEN '' WHEN r.owner IS DISTINCT FROM p_o THEN 'not-holder'
                 WHEN r.fence <> p_f THEN 'stale-fence' ELSE 'expired' END;
END $$;

CREATE OR REPLACE FUNCTION %[1]s.release(p_k text, p_o text, p_f bigint, OUT ok bool, OUT reason text, OUT at bigint)
LANGUAGE plpgsql AS $$
DECLARE r %[1]s.lease;
BEGIN
  INSERT INTO %[1]s.lease(k) VALUES (p_k) ON CONFLICT DO NOTHING;
  SELECT * INTO r FROM %[1]s.lease l WHERE l.k = p_k FOR UPDATE;
  at := %[1]s.now_us();
  UPDATE %[1]s.lease l SET owner = NULL WHERE l.k = p_k AND l.owner = p_o AND l.fence = p_f;
  ok := FOUND;
  reason := CASE WHEN ok THEN '' WHEN r.owner IS DISTINCT FROM p_o THEN 'not-holder' ELSE 'stale-fence' END;
END $$;

CREATE OR REPLACE FUNCTION %[1]s.write(p_k text, p_o text, p_f bigint, p_v text, OUT ok bool, OUT reason text, OUT at bigint)
LANGUAGE plpgsql AS $$
DECLARE r %[1]s.lease;
BEGIN
  INSERT INTO %[1]s.lease(k) VALUES (p_k) ON CONFLICT DO NOTHING;
  SELECT * INTO r FROM %[1]s.lease l WHERE l.k = p_k FOR UPDATE;
  at := %[1]s.now_us();
  UPDATE %[1]s.lease l SET data = p_v WHERE l.k = p_k AND l.owner = p_o AND l.fence = p_f AND l.exp > at;
  ok := FOUND;
  reason := CASE WHEN ok THEN '' WHEN r.owner IS DISTINCT FROM p_o THEN 'not-holder'
                 WHEN r.exp <= at THEN 'expired' ELSE 'stale-fence' END;
END $$;

CREATE OR REPLACE FUNCTION %[1]s.read(p_k text, OUT data text, OUT at bigint)
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO %[1]s.lease(k) VALUES (p_k) ON CONFLICT DO NOTHING;
  SELECT l.data INTO data FROM %[1]s.lease l WHERE l.k = p_k FOR SHARE;
  at := %[1]s.now_us();
END $$;
`

// Backend is a PostgreSQL lease client. Safe for concurrent use.
type Backend struct {
	pool   *pgxpool.Pool
	schema string // quoted
}

// Schema turns a run prefix into the schema name it uses.
func Schema(prefix string) string {
	var b strings.Builder
	b.WriteString("leasecheck_")
	for _, r := range strings.ToLower(prefix) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// Open connects to url (postgres://user:password@host:port/db?...); a
// non-empty addr replaces its host:port (the runner's proxy). It creates the
// run's schema (named by Schema(prefix)) when missing.
func Open(ctx context.Context, url, addr, prefix string) (*Backend, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, errors.New("postgres: bad URL (details withheld: it may hold a password)")
	}
	if addr != "" {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("postgres: bad address %q: %w", addr, err)
		}
		p, _ := strconv.Atoi(port)
		cfg.ConnConfig.Host, cfg.ConnConfig.Port = host, uint16(p)
		cfg.ConnConfig.Fallbacks = nil
	}
	cfg.ConnConfig.ConnectTimeout = 2 * time.Second
	cfg.MaxConns = 4
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	b := &Backend{pool: pool, schema: pgx.Identifier{Schema(prefix)}.Sanitize()}
	if err := b.setup(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return b, nil
}

func (b *Backend) setup(ctx context.Context) error {
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background())
	// One client creates the schema at a time.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, b.schema); err != nil {
		return err
	}
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, strings.Trim(b.schema, `"`)).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		if _, err := tx.Exec(ctx, "CREATE SCHEMA "+b.schema+";"+fmt.Sprintf(ddl, b.schema)); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

// ServerNow is the server's clock_timestamp().
func (b *Backend) ServerNow(ctx context.Context) (time.Time, error) {
	var us int64
	err := b.pool.QueryRow(ctx, "SELECT "+b.schema+".now_us()").Scan(&us)
	return time.UnixMicro(us), err
}

// Do runs one operation as one function call (one statement, one
// transaction).
func (b *Backend) Do(ctx context.Context, req backend.Request) (backend.Response, error) {
	var r backend.Response
	var at int64
	var err error
	s := b.schema
	switch req.Kind {
	case model.Acquire:
		err = b.pool.QueryRow(ctx, "SELECT ok, fence, reason, at FROM "+s+".acquire($1, $2, $3)",
			req.Key, req.Owner, req.TTL.Microseconds()).Scan(&r.OK, &r.Fence, &r.Reason, &at)
	case model.Renew:
		err = b.pool.QueryRow(ctx, "SELECT ok, reason, at FROM "+s+".renew($1, $2, $3, $4)",
			req.Key, req.Owner, req.Fence, req.TTL.Microseconds()).Scan(&r.OK, &r.Reason, &at)
	case model.Release:
		err = b.pool.QueryRow(ctx, "SELECT ok, reason, at FROM "+s+".release($1, $2, $3)",
			req.Key, req.Owner, req.Fence).Scan(&r.OK, &r.Reason, &at)
	case model.Write:
		err = b.pool.QueryRow(ctx, "SELECT ok, reason, at FROM "+s+".write($1, $2, $3, $4)",
			req.Key, req.Owner, req.Fence, req.Value).Scan(&r.OK, &r.Reason, &at)
	case model.Read:
		var v *string
		err = b.pool.QueryRow(ctx, "SELECT data, at FROM "+s+".read($1)", req.Key).Scan(&v, &at)
		r.OK = true
		if v != nil {
			r.Value, r.HasValue = *v, true
		}
	default:
		return backend.Response{}, errors.New("postgres: unknown op " + req.Kind.String())
	}
	if err != nil {
		return backend.Response{}, err
	}
	if req.Kind == model.Acquire && r.OK && r.Fence < 1 {
		return backend.Response{}, fmt.Errorf("postgres: acquire granted fence %d", r.Fence)
	}
	r.At = time.UnixMicro(at)
	return r, nil
}

// Cleanup drops the run's schema.
func (b *Backend) Cleanup(ctx context.Context) error {
	_, err := b.pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+b.schema+" CASCADE")
	return err
}

// Close closes the connections.
func (b *Backend) Close() error {
	b.pool.Close()
	return nil
}

// Addr returns the host:port of a postgres:// URL.
func Addr(url string) (string, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return "", errors.New("bad PostgreSQL URL")
	}
	return net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))), nil
}
