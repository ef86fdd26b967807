package fuzzing

import (
	"bufio"
	"io"
	"regexp"
	"strconv"
	"time"
)

// Stats is what one target's fuzzing did, read from go test's progress
// lines ("fuzz: elapsed: 6s, execs: 1234 (411/sec), ..."), which the
// fuzzer prints every 3 s.
type Stats struct {
	Elapsed time.Duration // the last line's elapsed time
	Execs   int64         // the last line's execs (minimization's are not counted by go test)
	// Moving is the time in intervals between two lines in which execs
	// grew. The rest went on gathering the baseline coverage of the seed
	// corpus, minimizing, or an execution that never ended.
	Moving time.Duration
	Lines  int // the progress lines read
}

// Rate is execs per second over the whole time.
func (s Stats) Rate() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Execs) / s.Elapsed.Seconds()
}

// MovingShare is the share of the time in which execs grew, 0..1.
func (s Stats) MovingShare() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return s.Moving.Seconds() / s.Elapsed.Seconds()
}

var (
	elapsedRe = regexp.MustCompile(`^fuzz: elapsed: (\S+?),`)
	execsRe   = regexp.MustCompile(`, execs: (\d+) `)
)

// Add reads one line of go test's output; lines that are not the
// fuzzer's progress lines are ignored.
func (s *Stats) Add(line string) {
	m := elapsedRe.FindStringSubmatch(line)
	if m == nil {
		return
	}
	at, err := time.ParseDuration(m[1])
	if err != nil {
		return
	}
	execs := s.Execs
	if e := execsRe.FindStringSubmatch(line); e != nil {
		execs, _ = strconv.ParseInt(e[1], 10, 64)
	}
	if s.Lines > 0 && execs > s.Execs {
		s.Moving += at - s.Elapsed
	}
	s.Elapsed, s.Execs = at, execs
	s.Lines++
}

// Read reads a whole output.
func Read(r io.Reader) (Stats, error) {
	var s Stats
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		s.Add(sc.Text())
	}
	return s, sc.Err()
}
