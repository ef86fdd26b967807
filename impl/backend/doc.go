// Package backend is the contract between leasecheck and a lease service
// under test (docs/design.md §5, "Backends, two tiers").
//
//   - Backend is the networked tier: etcd, Redis, PostgreSQL, anyone's.
//     Real goroutines call Do with a context; the real runner (package
//     realrun) times every call on the monotonic clock and records the
//     history. An error from Do means the outcome is unknown (timeout,
//     connection reset after sending): the op is recorded without `return`
//     and may or may not have taken effect. A definite refusal is a Response
//     with OK false and a Reason.
//   - machine.Clocked is the in-process tier: a coordinator whose clock is
//     injected as an integer `now` on every call, so it can run inside the
//     deterministic simulator (leasecheck's reference coordinator is one).
//     InProcess adapts one to Backend for the real runner and leasetest,
//     with the coordinator's clock reported as the exact `at` of every op.
//
// Every Backend describes itself with an Info: what fences its grants carry
// (none, as for most lock libraries, sequential or increasing), whether the
// service checks writes against the lease (Writes), both required (their
// zero values are undeclared, and Info.Check refuses them), how far its
// lease clock may stray from the client's timeline (the history's
// clock_uncertainty in interval mode) and how late it may free an expired
// lease (ExpiryLateness, the history's expiry_lateness). README.md in this
// directory is the adapter contract as a table — every op in every lease
// state, what Do must answer, when an error (unknown outcome) is right —
// with the advice on adapting a library; leasetest checks an adapter
// against it and names the row each failure breaks.
//
// A library that holds while it says so — it renews in the background and
// signals a loss through a context — gives its own signal and renewals
// (Holding) and lets the harness stop its whole client (Stopper, which
// an adapter builds on a Gate its wrapped connection or stream waits on);
// docs/holding-libraries.md maps one, and two real recipes (etcd's
// election, go-zookeeper's lock).
//
// Index: backend.go (Request, Response, Backend, Info, Fences, optional
// capabilities), inprocess.go (InProcess), holding.go (Holding, Renewal, Stopper, As), gate.go (Gate).
package backend
