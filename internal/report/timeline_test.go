package report

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/model"
)

var update = flag.Bool("update", false, "rewrite testdata/*.data.golden from the current output")

// data is the page's embedded JSON, decoded loosely for assertions.
type data struct {
	Title      string     `json:"title"`
	Replay     string     `json:"replay"`
	Secondary  string     `json:"secondary"`
	Unit       string     `json:"unit"`
	Base       string     `json:"base"`
	Total      int        `json:"total"`
	Procs      [][]string `json:"procs"`
	Keys       []string   `json:"keys"`
	Lanes      []string   `json:"lanes"`
	Properties [][]string `json:"properties"`
	Ops        struct {
		N     int     `json:"n"`
		Line  []int64 `json:"line"`
		Call  []int64 `json:"call"`
		Flags []int64 `json:"flags"`
	} `json:"ops"`
	Lin []struct {
		Key     int     `json:"key"`
		Verdict string  `json:"verdict"`
		Omitted int     `json:"omitted"`
		Steps   []int64 `json:"steps"`
	} `json:"lin"`
	Terms   [][]int64 `json:"terms"`
	Beliefs [][]int64 `json:"beliefs"`
	Faults  []struct {
		Kind   string `json:"kind"`
		Target string `json:"target"`
		Start  int64  `json:"start"`
		End    *int64 `json:"end"`
		Detail string `json:"detail"`
		Lane   *int   `json:"lane"`
		Procs  []int  `json:"procs"`
	} `json:"faults"`
	Violations []struct {
		Property string  `json:"property"`
		Run      bool    `json:"run"`
		Lines    []int   `json:"lines"`
		Ops      []int64 `json:"ops"`
		Focus    int64   `json:"focus"`
		From     int64   `json:"from"`
		To       int64   `json:"to"`
		Faults   []int   `json:"faults"`
		Story    string  `json:"story"`
	} `json:"violations"`
	Omitted *struct {
		Text    string     `json:"text"`
		Windows [][2]int64 `json:"windows"`
	} `json:"omitted"`
	Strs []string `json:"strs"`
}

func decode(t testing.TB, page []byte) data {
	t.Helper()
	var d data
	if err := json.Unmarshal(pageData(t, page), &d); err != nil {
		t.Fatalf("page data: %v", err)
	}
	return d
}

// The page's data for each case is golden: it is everything on the page
// that depends on the input (the rest is the fixed script and style).
func TestGoldenPages(t *testing.T) {
	for _, name := range cases {
		t.Run(name, func(t *testing.T) {
			got := pageData(t, render(t, loadCase(t, name), Options{}))
			path := filepath.Join("testdata", name+".data.golden")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./internal/report -run GoldenPages -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the page's data; review the diff after -update:\ngot:\n%s", path, got)
			}
		})
	}
}

// The page is the fixed shell around the data, and the same input gives
// the same bytes: twice in a row and from a fresh check of the same file.
func TestPageDeterministic(t *testing.T) {
	for _, name := range cases {
		a := render(t, loadCase(t, name), Options{})
		b := render(t, loadCase(t, name), Options{})
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two pages of the same input differ", name)
		}
		if !bytes.Contains(a, []byte(pageJS)) || !bytes.Contains(a, []byte(pageCSS)) || !bytes.Contains(a, []byte(pageBody)) {
			t.Errorf("%s: the page does not embed its script, style and body", name)
		}
	}
	h := genHistory(5000, 6, 3, true, 7)
	r := mustCheck(context.Background(), h, checker.Options{Workers: 2})
	a := render(t, Input{History: h, Check: r}, Options{MaxOps: 1000})
	b := render(t, Input{History: h, Check: mustCheck(context.Background(), h, checker.Options{Workers: 1})}, Options{MaxOps: 1000})
	if !bytes.Equal(a, b) {
		t.Error("generated history: pages differ between checks with 1 and 2 workers")
	}
}

// What every page must say about its history: every process, every fault,
// every violation with its story, the header's terms.
func TestPageContents(t *testing.T) {
	for _, name := range cases {
		t.Run(name, func(t *testing.T) {
			in := loadCase(t, name)
			d := decode(t, render(t, in, Options{}))
			h := in.History
			procs := map[string]bool{}
			for _, p := range d.Procs {
				procs[p[0]] = true
			}
			for _, op := range h.Ops {
				if !procs[op.Process] {
					t.Errorf("process %q has no row", op.Process)
				}
			}
			if len(d.Faults) != len(h.Faults) {
				t.Fatalf("%d faults on the page, %d in the history", len(d.Faults), len(h.Faults))
			}
			for i, f := range h.Faults {
				got := d.Faults[i]
				if got.Kind != f.Kind || got.Target != f.Target || got.Start != f.Start || got.Detail != f.Detail {
					t.Errorf("fault %d = %+v, want %+v", i, got, f)
				}
				if (got.Lane == nil) == (len(got.Procs) == 0) {
					t.Errorf("fault %d is on no row or on two kinds of row: %+v", i, got)
				}
			}
			want := len(in.Check.Violations) + len(in.Extra)
			if len(d.Violations) != want {
				t.Fatalf("%d violations on the page, want %d", len(d.Violations), want)
			}
			for i, v := range in.Check.Violations {
				got := d.Violations[i]
				if got.Property != v.Property || got.Story != v.Explanation || len(got.Ops) != len(v.Lines) || got.Focus < 0 {
					t.Errorf("violation %d = %+v, want %+v", i, got, v)
				}
			}
			if d.Unit != h.Header.TimeUnit || d.Total != len(h.Ops) || d.Ops.N != len(h.Ops) || d.Omitted != nil {
				t.Errorf("unit %q total %d drawn %d omitted %v", d.Unit, d.Total, d.Ops.N, d.Omitted)
			}
		})
	}
}

func TestPageFacts(t *testing.T) {
	t.Run("gc-pause: the pause is on A's row and overlaps both violations; A's belief outlives its term", func(t *testing.T) {
		d := decode(t, render(t, loadCase(t, "gc-pause"), Options{}))
		if len(d.Faults) != 1 || len(d.Faults[0].Procs) != 1 || d.Procs[d.Faults[0].Procs[0]][0] != "A" {
			t.Fatalf("faults = %+v", d.Faults)
		}
		for _, v := range d.Violations {
			if len(v.Faults) != 1 {
				t.Errorf("%s: faults at the time = %v, want the pause", v.Property, v.Faults)
			}
		}
		if d.Violations[0].Focus != 3 { // line 5, A's zombie write
			t.Errorf("focus = %d, want op 3 (line 5)", d.Violations[0].Focus)
		}
		// [proc, fence, from, to, open]
		if len(d.Beliefs) != 2 || d.Beliefs[0][3] != 31 || d.Beliefs[1][4] != 1 {
			t.Errorf("beliefs = %v", d.Beliefs)
		}
		// A paused holder's belief is excused from exclusive-belief (runprop):
		// the page draws no run finding here.
		for _, v := range d.Violations {
			if v.Run {
				t.Errorf("a run finding on a paused holder's belief: %+v", v)
			}
		}
	})
	t.Run("clock-skew: the clock step is on the coordinator's own row", func(t *testing.T) {
		d := decode(t, render(t, loadCase(t, "clock-skew"), Options{}))
		if len(d.Lanes) != 1 || d.Lanes[0] != "coordinator" || d.Faults[0].Lane == nil || *d.Faults[0].Lane != 0 {
			t.Errorf("lanes %v, faults %+v", d.Lanes, d.Faults)
		}
		// the superseded term: cause 2 (next grant)
		if len(d.Terms) != 2 || d.Terms[0][9] != int64(Superseded) {
			t.Errorf("terms = %v", d.Terms)
		}
		// The double belief is a run finding (a coordinator's clock step is
		// no excuse: runprop), drawn over its lines.
		last := d.Violations[len(d.Violations)-1]
		if last.Property != "exclusive-belief" || !last.Run || len(last.Ops) != 2 {
			t.Errorf("finding = %+v", last)
		}
	})
	t.Run("a fault on an owner lands on all its processes; one on an incarnation's base name on every incarnation", func(t *testing.T) {
		h := hist(0,
			"A-main acquire ttl=10 fence=1 call=0 ret=1 at=0 ok owner=A",
			"A-renew renew ttl=10 fence=1 call=3 ret=4 at=3 ok owner=A",
			"h1 acquire ttl=10 call=5 ret=6 at=5",
			"h1#2 acquire ttl=10 call=7 ret=8 at=7")
		h.Faults = []model.FaultRecord{{Kind: "pause", Target: "A", Start: 1, End: 2, HasEnd: true}, {Kind: "crash", Target: "h1#", Start: 6},
			{Kind: "crash", Target: "h1", Start: 6}, {Kind: "partition", Target: "server", Start: 1}, {Kind: "coordinator-crash", Target: "coordinator", Start: 2}}
		d := decode(t, render(t, Input{History: h}, Options{}))
		if got := d.Faults[0].Procs; len(got) != 2 {
			t.Errorf("owner fault on rows %v, want A-main and A-renew", got)
		}
		if got := d.Faults[2].Procs; len(got) != 1 || d.Procs[got[0]][0] != "h1" {
			t.Errorf("h1's crash on rows %v, want h1 alone", got)
		}
		if strings.Join(d.Lanes, ",") != "coordinator,server,h1#" {
			t.Errorf("lanes = %v, want the coordinator first", d.Lanes)
		}
	})
	t.Run("a linearizable violation happens at the op no order places, not at the last op it names", func(t *testing.T) {
		// The checker names the grant and the culprit (and, on short keys,
		// the ops that could not come next either); the focus is the
		// culprit, the zombie write.
		h := genHistory(20000, 8, 1, true, 3)
		r := mustCheck(context.Background(), h, checker.Options{})
		d := decode(t, render(t, Input{History: h, Check: r}, Options{}))
		v := d.Violations[0]
		if v.Property != checker.Linearizable || len(v.Lines) < 2 {
			t.Fatalf("want a linearizable violation naming several lines, got %+v", v)
		}
		if op := h.Ops[v.Focus]; op.Kind != model.Write || op.Value != "zombie" {
			t.Errorf("focus = line %d (%s), want the zombie write", op.Line, op.Describe())
		}
	})
	t.Run("no check: the history alone", func(t *testing.T) {
		in := loadCase(t, "gc-pause")
		in.Check, in.Extra = nil, nil
		d := decode(t, render(t, in, Options{}))
		if len(d.Violations) != 0 || len(d.Properties) != 0 || len(d.Lin) != 0 || len(d.Terms) != 2 {
			t.Errorf("violations %d properties %d lin %d terms %d", len(d.Violations), len(d.Properties), len(d.Lin), len(d.Terms))
		}
		for _, term := range d.Terms {
			if term[10] != 0 {
				t.Errorf("term %v is marked linearized without a check", term)
			}
		}
	})
	t.Run("nanoseconds since 1970: times are written relative to a base the script adds back", func(t *testing.T) {
		const t0 = 1_760_000_000_000_000_000
		h := hist(0, "A acquire ttl=10 fence=1 call=0 ret=1 at=0 ok", "A write fence=1 value=v call=2 ret=3 at=2 ok")
		for i := range h.Ops {
			h.Ops[i].Call += t0
			h.Ops[i].Return += t0
			h.Ops[i].At += t0
		}
		d := decode(t, render(t, Input{History: h}, Options{}))
		if d.Base != "1760000000000000000" || d.Ops.Call[0] != 0 || d.Ops.Call[1] != 2 || d.Terms[0][3] != 0 {
			t.Errorf("base %s calls %v terms %v", d.Base, d.Ops.Call, d.Terms)
		}
	})
	t.Run("an empty history draws an empty page", func(t *testing.T) {
		d := decode(t, render(t, Input{History: &model.History{Header: model.DefaultHeader()}}, Options{}))
		if d.Ops.N != 0 || d.Title != "history" {
			t.Errorf("%+v", d)
		}
	})
	if err := WriteTimeline(&bytes.Buffer{}, Input{}, Options{}); err == nil {
		t.Error("WriteTimeline without a history: no error")
	}
}

// Every string on the page is user data: none may break out of the data
// element, and every one must come back unchanged.
func TestPageEscaping(t *testing.T) {
	in := loadCase(t, "xss")
	page := render(t, in, Options{})
	if n := bytes.Count(page, []byte("<script")); n != 2 {
		t.Errorf("%d <script elements, want 2 (the data and the code)", n)
	}
	if n := bytes.Count(page, []byte("</script")); n != 2 {
		t.Errorf("%d </script, want 2", n)
	}
	for _, bad := range []string{"<img", "<svg", "<b>", "<!--", "\u2028", "\x00", "alert(1)</"} {
		if bytes.Contains(pageData(t, page), []byte(bad)) {
			t.Errorf("the data holds %q raw", bad)
		}
	}
	if !bytes.Contains(page, []byte("<title>&lt;b&gt;xss&lt;/b&gt; &#34;title&#34; &amp; &lt;/title&gt;&lt;script&gt;alert(7)&lt;/script&gt; — leasecheck timeline</title>")) {
		t.Error("the title is not escaped")
	}
	d := decode(t, page)
	if d.Title != in.Title || d.Replay != in.Replay {
		t.Errorf("title %q replay %q: not round-tripped", d.Title, d.Replay)
	}
	if d.Secondary != "" {
		t.Errorf("secondary = %q: a javascript: link must not reach the page", d.Secondary)
	}
	if d.Procs[0][0] != in.History.Ops[0].Process || d.Procs[0][1] != in.History.Ops[0].Owner || d.Keys[0] != in.History.Ops[0].Key {
		t.Errorf("procs %q keys %q", d.Procs, d.Keys)
	}
	values := strings.Join(d.Strs, "|")
	for _, want := range []string{in.History.Ops[1].Value, in.History.Ops[3].Value, in.History.Ops[3].Error} {
		if !strings.Contains(values, want) {
			t.Errorf("value %q not round-tripped", want)
		}
	}
	if d.Faults[0].Kind != "<i>pause</i>" || d.Faults[0].Detail != "<script>alert(4)</script>" {
		t.Errorf("fault %+v", d.Faults[0])
	}
	// The script never parses data as markup.
	if regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function`).MatchString(pageJS) {
		t.Error("the script uses an API that parses markup or code")
	}
}

func TestSafeLink(t *testing.T) {
	for in, want := range map[string]string{
		"porcupine.html": "porcupine.html", "../x/p.html#a:b": "../x/p.html#a:b", "https://e.org/p": "https://e.org/p",
		"file:///tmp/p.html": "file:///tmp/p.html", "javascript:alert(1)": "", " JavaScript:alert(1)": "", "data:text/html,x": "",
	} {
		if got := safeLink(in); got != want {
			t.Errorf("safeLink(%q) = %q, want %q", in, got, want)
		}
	}
}

// Beyond MaxOps the page draws windows around the violations and says
// exactly what it left out.
func TestPageWindow(t *testing.T) {
	h := genHistory(20000, 8, 1, true, 3)
	r := mustCheck(context.Background(), h, checker.Options{})
	if !r.Violated() {
		t.Fatal("the generated history has no violation")
	}
	for _, max := range []int{1000, 5000} {
		d := decode(t, render(t, Input{History: h, Check: r}, Options{MaxOps: max}))
		if d.Ops.N > max || d.Ops.N < max*9/10 {
			t.Errorf("MaxOps %d: drew %d ops", max, d.Ops.N)
		}
		if d.Omitted == nil || len(d.Omitted.Windows) == 0 {
			t.Fatalf("MaxOps %d: nothing said about what was left out", max)
		}
		for _, v := range d.Violations {
			if len(v.Ops) != len(v.Lines) {
				t.Errorf("violation %s: %d of its %d ops drawn", v.Property, len(v.Ops), len(v.Lines))
			}
		}
		// every drawn op lies in a window, every other one outside all
		ws := d.Omitted.Windows
		in := func(lo, hi int64) bool {
			for _, w := range ws {
				if lo <= w[1] && hi >= w[0] {
					return true
				}
			}
			return false
		}
		drawn := map[int]bool{}
		line := int64(0)
		for _, dl := range d.Ops.Line {
			line += dl
			drawn[int(line)] = true
		}
		notDrawn := 0
		for i := range h.Ops {
			op := &h.Ops[i]
			if drawn[op.Line] != in(opStart(op), opEnd(op)) {
				t.Fatalf("MaxOps %d: line %d drawn=%v but in a window=%v", max, op.Line, drawn[op.Line], !drawn[op.Line])
			}
			if !drawn[op.Line] {
				notDrawn++
			}
		}
		// the numbers the text gives add up to what was left out
		sum := 0
		for _, m := range regexp.MustCompile(`([0-9,]+) (?:operations before|after|between)`).FindAllStringSubmatch(d.Omitted.Text, -1) {
			n := 0
			for _, c := range strings.ReplaceAll(m[1], ",", "") {
				n = n*10 + int(c-'0')
			}
			sum += n
		}
		if sum != notDrawn || notDrawn != len(h.Ops)-d.Ops.N {
			t.Errorf("MaxOps %d: the text counts %d left out, %d were: %s", max, sum, notDrawn, d.Omitted.Text)
		}
		if d.Lin[0].Omitted+len(d.Lin[0].Steps) == 0 || d.Lin[0].Omitted == 0 {
			t.Errorf("MaxOps %d: linearization steps %d omitted %d", max, len(d.Lin[0].Steps), d.Lin[0].Omitted)
		}
	}
	// A history without violations is drawn from its start.
	clean := genHistory(3000, 4, 2, false, 5)
	d := decode(t, render(t, Input{History: clean}, Options{MaxOps: 500}))
	if d.Omitted == nil || !strings.Contains(d.Omitted.Text, "of the history's start") || d.Ops.Call[0] != clean.Ops[0].Call {
		t.Errorf("clean history: %+v", d.Omitted)
	}
}

func TestGroup(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1000: "-1,000"} {
		if got := group(n); got != want {
			t.Errorf("group(%d) = %q, want %q", n, got, want)
		}
	}
}
