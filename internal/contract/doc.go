// Package contract is the adapter contract of impl/backend as data: one
// Rule per op, lease state and fence presented, saying what a Backend's Do
// must answer. leasetest checks an adapter against it and names the rule a
// failure breaks; impl/backend/README.md renders it for the people who
// adapt a service, and a test keeps the two equal.
package contract
