//go:build race

package ctrlruntime

// raceDetector says the tests run under -race.
const raceDetector = true
