package scenario

import (
	"fmt"
	"slices"
)

// Client is an adversarial client (docs/design.md §7): beside the well-behaved
// holders, it sends any operation with any owner and any fence — acquires
// by the live holder, renews and releases by non-holders, writes after a
// release, duplicates of old requests — so that every check a coordinator
// makes behind the fence check is exercised. Its operations are one
// sequential process of the history, named Name; it waits for each answer
// (or gives up after TTL/3) before sending the next.
//
// The threat model, enforced when a request is sent (the simulator skips a
// request that breaks it, and says so in the trace): the client never
// presents a holder's own credentials in a way no protocol could tell apart
// from the holder itself. It speaks as another owner only to acquire, or
// with a stale, future or replayed fence — never with no fence or the
// current one — and replays a holder's write only while no renew of that
// owner under that fence has failed. Under fenced storage it writes only
// with a fence below the highest the resource has accepted, or a holder's
// own old one (the resource cannot tell owners apart, and a fence it has
// not seen is a grant's secret). As itself it obeys the iron rule: no write under a fence
// whose renew failed or went unanswered, until it acquires again.
type Client struct {
	Name     string          `json:"name"`
	Requests []ClientRequest `json:"requests"`
}

// ClientRequest is one request of a Client's program, sent at At (true
// time) or, when the client is still waiting for an answer, right after it.
type ClientRequest struct {
	At int64 `json:"at"`
	// After, when set, holds the request from At until the coordinator next
	// "grant"s or "release"s the lease, and sends it then: a client that
	// reacts to what it sees (a duplicate of a request right after the
	// release that ended its lease). "acquired" sends it Delay ms after
	// the answer to the client's latest acquire, when that acquire was
	// granted (else it is skipped): a request aimed at an instant of the
	// client's own lease, such as its expiry tick (drawEdgeClient).
	After string `json:"after,omitempty"`
	Delay int64  `json:"delay,omitempty"`
	// Op is acquire, renew, release or write.
	Op string `json:"op"`
	// Owner is who the request claims to be: "" the client itself, "live"
	// the owner the coordinator last granted the lease to (skipped when
	// nobody holds it), "last" the owner of the latest request of this kind
	// a holder sent, or a holder's name.
	Owner string `json:"owner,omitempty"`
	// Fence is what it presents: "none" (the default), "stale" (below the
	// latest grant), "current" (the latest grant's), "future" (never
	// granted) or "replay" (that of the owner's latest request of this
	// kind: a duplicate of an old request).
	Fence string `json:"fence,omitempty"`
}

// The ClientRequest vocabulary.
var (
	ClientOps    = []string{"acquire", "renew", "release", "write"}
	ClientFences = []string{"none", "stale", "current", "future", "replay"}
)

// Claims reports whether the request speaks as someone other than the
// client itself.
func (r ClientRequest) Claims() bool { return r.Owner != "" }

// FenceSpec returns the fence spec with the default spelled out.
func (r ClientRequest) FenceSpec() string {
	if r.Fence == "" {
		return "none"
	}
	return r.Fence
}

func (r ClientRequest) String() string {
	owner := r.Owner
	if owner == "" {
		owner = "self"
	}
	if r.After == "acquired" {
		return fmt.Sprintf("%s(owner=%s, fence=%s) %dms after its acquire was granted", r.Op, owner, r.FenceSpec(), r.Delay)
	}
	if r.After != "" {
		return fmt.Sprintf("%s(owner=%s, fence=%s) after a %s", r.Op, owner, r.FenceSpec(), r.After)
	}
	return fmt.Sprintf("%s(owner=%s, fence=%s)", r.Op, owner, r.FenceSpec())
}

// Valid reports why r breaks the vocabulary or the threat model's static
// rules, or "".
func (r ClientRequest) Valid(holders []string) string {
	if !slices.Contains(ClientOps, r.Op) {
		return fmt.Sprintf("unknown op %q", r.Op)
	}
	if !slices.Contains(ClientFences, r.FenceSpec()) {
		return fmt.Sprintf("unknown fence %q", r.Fence)
	}
	if r.After != "" && r.After != "grant" && r.After != "release" && r.After != "acquired" {
		return fmt.Sprintf("after %q is not grant, release or acquired", r.After)
	}
	if r.Delay < 0 || r.Delay > 0 && r.After != "acquired" {
		return "a delay is >= 0, and only after acquired"
	}
	switch r.Owner {
	case "", "live", "last":
	default:
		if !slices.Contains(holders, r.Owner) {
			return fmt.Sprintf("owner %q is not self, live, last or a holder", r.Owner)
		}
	}
	if r.Op == "acquire" {
		if r.FenceSpec() != "none" {
			return "an acquire presents no fence"
		}
		return ""
	}
	if r.Op == "write" && r.FenceSpec() == "none" {
		return "a write presents a fence (history format v1 records one for every write)"
	}
	if r.Claims() {
		switch r.FenceSpec() {
		case "none", "current":
			return "speaking as another owner with no fence or the current one is that owner itself"
		case "replay":
			if r.Op == "renew" {
				return "a replayed renew could end that owner's lease under the iron rule"
			}
		case "stale":
			if r.Op == "renew" {
				return "a stale renew as another owner could end that owner's lease under the iron rule"
			}
		}
	} else if r.FenceSpec() == "replay" {
		return "replay duplicates a holder's request: name its owner"
	}
	return ""
}

func (s *Scenario) validateClients(names map[string]bool) error {
	for _, c := range s.Clients {
		if c.Name == "" || names[c.Name] {
			return fmt.Errorf("scenario: client name %q empty, reserved or repeated", c.Name)
		}
		names[c.Name] = true
		last := int64(-1)
		for i, r := range c.Requests {
			if why := r.Valid(s.Names()); why != "" {
				return fmt.Errorf("scenario: client %s request %d (%s): %s", c.Name, i, r, why)
			}
			if r.At < last {
				return fmt.Errorf("scenario: client %s request %d: at %d before the previous one's", c.Name, i, r.At)
			}
			last = r.At
		}
	}
	return nil
}
