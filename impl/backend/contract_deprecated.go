package backend

import "github.com/leasecheck/leasecheck/internal/contract"

// The adapter contract as data left this package in v0.14.0: README.md in
// this directory shows the table an adapter is written against, and
// leasetest names the rule each of its failures breaks. These aliases are
// kept for v0.14.0 only.

// Contract is the adapter contract, one Rule per row.
//
// Deprecated: read the table in impl/backend's README.md; leasetest judges
// an adapter by it. Contract leaves the package after v0.14.0.
func Contract() []Rule { return contract.Contract() }

// RuleByID returns the contract's rule with that ID.
//
// Deprecated: leaves the package after v0.14.0, with Contract.
func RuleByID(id string) (Rule, bool) { return contract.RuleByID(id) }

// Rule is one row of the contract.
//
// Deprecated: leaves the package after v0.14.0, with Contract.
type Rule = contract.Rule

// State is the lease state as the requester of an op sees it.
//
// Deprecated: leaves the package after v0.14.0, with Contract.
type State = contract.State

// Presented is the kind of fence a renew, release or write presents.
//
// Deprecated: leaves the package after v0.14.0, with Contract.
type Presented = contract.Presented

// Answer is what Do must return.
//
// Deprecated: leaves the package after v0.14.0, with Contract.
type Answer = contract.Answer

// The contract's lease states, fences presented and answers.
//
// Deprecated: they leave the package after v0.14.0, with Contract.
const (
	Free               = contract.Free
	MineLive           = contract.MineLive
	MineExpired        = contract.MineExpired
	OtherLive          = contract.OtherLive
	OtherExpired       = contract.OtherExpired
	Released           = contract.Released
	EarlierTerm        = contract.EarlierTerm
	NotMine            = contract.NotMine
	AnyState           = contract.AnyState
	NoFencePresented   = contract.NoFencePresented
	CurrentFence       = contract.CurrentFence
	StaleOrFutureFence = contract.StaleOrFutureFence
	AnyFence           = contract.AnyFence
	OK                 = contract.OK
	Refused            = contract.Refused
	OKOrError          = contract.OKOrError
	RefusedOrError     = contract.RefusedOrError
)
