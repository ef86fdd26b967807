// Package report draws what leasecheck found: the lease timeline, one
// self-contained HTML page per history (docs/design.md §9).
//
// WriteTimeline is the one entry point every command calls (check --html,
// and the pages run, verify and explore save with each failure). Its
// Input is the history with its fault records, the checker's Result, the
// holders' beliefs when the runner knows them, and run-property findings;
// Options bound the page's size.
//
// The page has one row per process, named as in the history, on a real
// time axis in the history's unit with zoom and pan: each op a bar from
// call to return with its `at` marked and its outcome; the coordinator's
// terms as bands; each holder's beliefs; faults on the rows they hit;
// every violation drawn where it happens, numbered, with its story
// printed beside it and the first one in view when the page opens; the
// linearization of the violating key. The data is embedded as compact JSON
// and drawn onto a canvas by a small script, so the page's size follows
// the history (about 30 bytes per op), not pixels per op; past
// Options.MaxOps it draws windows around the violations and says exactly
// what it left out. No network, no external fonts; every string is user
// data and reaches the page only as text. The same input gives the same
// bytes.
//
// Terms derives the coordinator's terms (holder, fence, granted and actual
// expiry) from the ops and the linearization; BeliefsFromTrace turns a
// runner's trace lines into belief intervals.
//
// Index:
//   - timeline.go: Input, Finding, Options, WriteTimeline; choosing the
//     ops to draw; the page's data.
//   - terms.go: Term, Window, Terms.
//   - beliefs.go: Belief, TraceLine, BeliefsFromTrace.
//   - jsonw.go: the JSON writer, escaped for a <script> element.
//   - page/: the page's HTML body, style and script.
//
// The page is tested in a real headless Chromium (browser_test.go); its
// screenshots in docs/ are made by `go test ./internal/report -run Browser
// -screenshots`.
package report
