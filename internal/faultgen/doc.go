// Package faultgen draws fault plans: the scenario generator's plan of
// faults at drawn instants (Generate, One) and the explorer's candidates,
// faults with fixed parameters that may strike at any step (Candidates).
// The fault kinds themselves are package faults'.
package faultgen
