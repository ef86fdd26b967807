// Package backend is the contract between leasecheck and a lease service
// under test (DESIGN.md §5, "Backends, two tiers").
//
//   - Backend is the networked tier: etcd, Redis, PostgreSQL, anyone's.
//     Real goroutines call Do with a context; the real runner (package
//     realrun) times every call on the monotonic clock and records the
//     history. An error from Do means the outcome is unknown (timeout,
//     connection reset after sending): the op is recorded without `return`
//     and may or may not have taken effect. A definite refusal is a Response
//     with OK false and a Reason.
//   - Clocked is the in-process tier: a coordinator whose clock is injected
//     as an integer `now` on every call, so it can run inside the
//     deterministic simulator. impl/memstore.Store is one. InProcess adapts a
//     Clocked coordinator to Backend for the real runner and leasetest, with
//     the coordinator's clock reported as the exact `at` of every op.
//
// Every Backend describes itself with an Info: where its fences come from,
// what its fenced write is, how it numbers fences (model.Sequential or
// model.Increasing) and how far its lease clock may stray from the client's
// timeline (the history's clock_uncertainty in interval mode).
//
// Index: backend.go (Request, Response, Backend, Info, optional
// capabilities), inprocess.go (Clocked, InProcess).
package backend
