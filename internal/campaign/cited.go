package campaign

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/leasecheck/leasecheck/internal/timefmt"
	"github.com/leasecheck/leasecheck/model"
)

// citation finds the history lines a story cites: "line 5", "lines 3, 5",
// "lines 4 and 9" (never "trace lines", which cite the simulator's trace).
var citation = regexp.MustCompile(`(?:^|[^a-z])(lines?) ((?:\d+)(?:(?:, | and |, and )\d+)*)(: )?`)

// CheckCitedLines reads the saved history at path and checks every history
// line the story text cites: it must be an operation of that file, and
// where the story describes it ("line 5: B acquire(ttl=10) -> ok ..."), the
// very operation described. It returns the first mismatch, naming the line.
// A story told beside a saved file must cite that file, not the history of
// the run before shrinking.
func CheckCitedLines(path, story string) error {
	ops, tf, err := opsByLine(path)
	if err != nil {
		return err
	}
	for _, m := range citation.FindAllStringSubmatchIndex(story, -1) {
		start := m[0]
		if strings.HasSuffix(story[:m[2]], "trace ") {
			continue
		}
		nums := story[m[4]:m[5]]
		for _, f := range strings.FieldsFunc(nums, func(r rune) bool { return r == ',' || r == ' ' || r == 'a' || r == 'n' || r == 'd' }) {
			n, err := strconv.Atoi(f)
			if err != nil {
				continue
			}
			op, ok := ops[n]
			if !ok {
				return fmt.Errorf("%s: the story cites line %d, which is not an operation of the file (%q)", path, n, around(story, start))
			}
			if m[6] >= 0 && !strings.Contains(nums, ",") && !strings.Contains(nums, " and ") {
				desc := op.DescribeInUnit(tf.Unit) // the story renders times as timefmt.Times does
				if got := story[m[7]:min(len(story), m[7]+len(desc))]; got != desc {
					return fmt.Errorf("%s: the story describes line %d as %q, but the file's line %d is %q", path, n, got, n, desc)
				}
			}
		}
	}
	return nil
}

func around(s string, at int) string {
	return strings.TrimSpace(s[at:min(len(s), at+80)])
}

// opsByLine reads a history file and maps each op's physical line to it.
func opsByLine(path string) (map[int]model.Op, timefmt.Times, error) {
	h, err := model.ReadHistoryFile(path)
	if err != nil {
		return nil, timefmt.Times{}, err
	}
	tf := timefmt.Times{Unit: h.Header.TimeUnit}
	out := make(map[int]model.Op, len(h.Ops))
	for _, op := range h.Ops {
		out[op.Line] = op
	}
	// The reader numbers ops by their physical line; make sure of it, so
	// that the check cannot pass on a renumbered history.
	f, err := os.Open(path)
	if err != nil {
		return nil, tf, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for n := 1; sc.Scan(); n++ {
		if _, ok := out[n]; ok && !strings.Contains(sc.Text(), `"op"`) {
			return nil, tf, fmt.Errorf("%s:%d: not an operation, yet the reader numbered an op so", path, n)
		}
	}
	return out, tf, sc.Err()
}
