//go:build !race

package raceflag

// Enabled says the race detector is built in.
const Enabled = false
