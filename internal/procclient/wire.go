package procclient

import (
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
)

// The environment of a child: which registered client to run, and what
// to open it on.
const (
	envName    = "LEASECHECK_CLIENT"
	envAddr    = "LEASECHECK_CLIENT_ADDR"
	envArg     = "LEASECHECK_CLIENT_ARG"
	envService = "LEASECHECK_CLIENT_SERVICE"
)

// The operations of a message. Parent to child: opDo, opCancel, opNow,
// opCleanup, opClose, opServiceReply. Child to parent: opReady, opReply,
// opRenewal, opLost, opService.
const (
	opReady        = "ready"
	opDo           = "do"
	opCancel       = "cancel"
	opReply        = "reply"
	opNow          = "now"
	opCleanup      = "cleanup"
	opClose        = "close"
	opRenewal      = "renewal"
	opLost         = "lost"
	opService      = "service"
	opServiceReply = "service-reply"
)

// message is one line of the protocol, either way.
type message struct {
	Op string `json:"op"`
	ID uint64 `json:"id,omitempty"`
	// Req, with Timeout (ns) its deadline, for opDo and opService.
	Req     *backend.Request  `json:"req,omitempty"`
	Timeout time.Duration     `json:"timeout,omitempty"`
	Resp    *backend.Response `json:"resp,omitempty"`
	// Answered: a reply carries an answer; false with Err: the outcome is
	// unknown.
	Answered bool   `json:"answered,omitempty"`
	Err      string `json:"err,omitempty"`
	// Key, Owner and Fence name the grant of opLost.
	Key   string `json:"key,omitempty"`
	Owner string `json:"owner,omitempty"`
	Fence int64  `json:"fence,omitempty"`
	// Renewal is opRenewal's.
	Renewal *backend.Renewal `json:"renewal,omitempty"`
	// At is opNow's answer.
	At time.Time `json:"at,omitzero"`
	// Caps, in opReady: what the child's backend offers.
	Holding bool `json:"holding,omitempty"`
	Clock   bool `json:"clock,omitempty"`
	Cleaner bool `json:"cleaner,omitempty"`
}
