// Package raceflag says whether the binary was built with the race
// detector, so that a test can leave out of a raced run the work that
// starts no goroutine (a single-threaded search is raced for nothing and
// runs several times slower) while the plain run keeps all of it.
package raceflag
