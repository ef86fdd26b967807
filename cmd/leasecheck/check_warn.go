package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// A recorded "no answer" is a common way to get a history wrong: a client
// that timed out writes {"op":"renew",...,"return":6,"ok":false,
// "error":"timeout"}. The format reads that as a definite refusal (the
// operation did not take effect), so a renewal that did extend the lease,
// or a write that did land, becomes a false alarm. The verdict keeps the
// format's meaning (a timeout is recorded with no "return"); check only
// warns, naming the lines. This scan is a pass over the raw lines beside
// the checker's reader, so it needs nothing from the checker.

// checkWarning is one entry of check --json's "warnings": the lines of the
// history it is about (the first maxWarnedLines of them), how many there
// are in all, and what to do.
type checkWarning struct {
	File    string `json:"file"`
	Lines   []int  `json:"lines"`
	Count   int    `json:"count"`
	Message string `json:"message"`
}

func (w checkWarning) String() string {
	lines := make([]string, len(w.Lines))
	for i, l := range w.Lines {
		lines[i] = fmt.Sprint(l)
	}
	more := ""
	if w.Count > len(w.Lines) {
		more = fmt.Sprintf(" and %d more", w.Count-len(w.Lines))
	}
	word := "line"
	if w.Count > 1 {
		word = "lines"
	}
	return fmt.Sprintf("%s: %s %s%s: %s", w.File, word, strings.Join(lines, ", "), more, w.Message)
}

// maxWarnedLines bounds the lines a warning lists; it counts them all.
const maxWarnedLines = 20

// maxScannedLine is the longest line the scan looks at: an op record is a
// few hundred bytes, and a longer line is left to the reader to judge.
const maxScannedLine = 1 << 16

// unansweredWords are what clients write when they got no answer: the
// outcome is unknown, not refused. A refusal a coordinator gives (held,
// expired, stale-fence, not-holder) and a request never sent (connection
// refused) are definite, and are not in the list.
var unansweredWords = []string{"timeout", "timed out", "time out", "deadline", "unknown", "indeterminate", "ambiguous",
	"no answer", "no response", "unanswered", "canceled", "cancelled", "eof", "connection reset", "broken pipe", "unavailable"}

// looksUnanswered reports whether an op's error says it got no answer.
func looksUnanswered(msg string) bool {
	m := strings.ToLower(msg)
	for _, w := range unansweredWords {
		if strings.Contains(m, w) {
			return true
		}
	}
	return false
}

// refusalScan is an io.Writer that reads a history's raw lines as they go
// by (a copy of the file, or a tee of standard input) and finds the op
// records that are refusals by their fields and timeouts by their words.
// Lines are counted as the reader counts them: physical lines, 1-based.
type refusalScan struct {
	line    int
	partial []byte
	skip    bool // the current line is longer than maxScannedLine
	lines   []int
	n       int
	errors  []string // the distinct error strings seen, the first few
}

func (s *refusalScan) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.keep(p)
			break
		}
		if len(s.partial) > 0 || s.skip {
			s.keep(p[:i])
			s.consider(s.partial)
			s.partial, s.skip = s.partial[:0], false
		} else {
			s.consider(p[:i])
		}
		p = p[i+1:]
	}
	return n, nil
}

// keep holds the start of a line that continues in the next write.
func (s *refusalScan) keep(p []byte) {
	if s.skip || len(s.partial)+len(p) > maxScannedLine {
		s.partial, s.skip = s.partial[:0], true
		return
	}
	s.partial = append(s.partial, p...)
}

// finish considers a last line with no newline.
func (s *refusalScan) finish() {
	if len(s.partial) > 0 || s.skip {
		s.consider(s.partial)
		s.partial, s.skip = nil, false
	}
}

func (s *refusalScan) consider(line []byte) {
	s.line++
	if s.skip || len(line) > maxScannedLine || !bytes.Contains(line, []byte(`"error"`)) {
		return
	}
	var r struct {
		Op     *string         `json:"op"`
		Return json.RawMessage `json:"return"`
		OK     *bool           `json:"ok"`
		Error  *string         `json:"error"`
	}
	if json.Unmarshal(line, &r) != nil || r.Op == nil || r.OK == nil || *r.OK || r.Error == nil {
		return
	}
	if len(r.Return) == 0 || string(r.Return) == "null" || !looksUnanswered(*r.Error) {
		return
	}
	s.n++
	if len(s.lines) < maxWarnedLines {
		s.lines = append(s.lines, s.line)
	}
	if len(s.errors) < 3 && !containsString(s.errors, *r.Error) {
		s.errors = append(s.errors, *r.Error)
	}
}

// warning is the scan's finding, nil when there is none.
func (s *refusalScan) warning(file string) *checkWarning {
	s.finish()
	if s.n == 0 {
		return nil
	}
	quoted := make([]string, len(s.errors))
	for i, e := range s.errors {
		b, _ := json.Marshal(e)
		quoted[i] = `"error":` + string(b)
	}
	return &checkWarning{File: file, Lines: s.lines, Count: s.n, Message: fmt.Sprintf(
		"a \"return\" with \"ok\":false and %s is judged a definite refusal (the operation did not take effect); "+
			"if the client got no answer, its outcome is unknown: record it with no \"return\" (see the history format in the README)",
		strings.Join(quoted, " or "))}
}

func containsString(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
