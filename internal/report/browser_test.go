package report

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/internal/timefmt"
	"github.com/leasecheck/leasecheck/model"
)

var screenshots = flag.Bool("screenshots", false, "write docs/timeline-*.png from the browser test (go test ./internal/report -run Browser -screenshots)")

// The viewport of the test and of the screenshots.
const viewW, viewH = 1400, 800

// The three screenshots the README shows: a GC-pause zombie write, a
// clock-skew double holder, a dead renewal loop.
var screenshotOf = map[string]string{
	"gc-pause":          "timeline-gc-pause.png",
	"clock-skew":        "timeline-clock-skew.png",
	"renewal-loop-dies": "timeline-renewal-loop-dies.png",
}

// chromium finds Debian's chromium (or another Chromium-based browser). A
// missing browser skips the test with the reason, and fails it under CI.
func chromium(t *testing.T) string {
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium on this machine, and CI=true: the timeline must be tested in a real browser (.ci/run installs Debian's chromium)")
	}
	t.Skip("no chromium on this machine (apt-get install chromium); under CI=true this fails")
	return ""
}

// newBrowser starts a headless Chromium with a fresh profile, for the test.
func newBrowser(t *testing.T) context.Context {
	path := chromium(t)
	dir, err := os.MkdirTemp("", "leasecheck-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Chromium's children may still write the profile for a moment
		// after the browser stops.
		for range 50 {
			if os.RemoveAll(dir) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	alloc, cancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(dir),
	)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	// The first action starts the browser; it lives as long as ctx (a
	// shorter context here would stop it).
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

// tab is one page loaded in its own tab, with everything it said.
type tab struct {
	ctx      context.Context
	url      string
	mu       sync.Mutex
	errors   []string // console errors, uncaught exceptions, browser log errors
	requests []string // every URL the page asked for but itself
	dialogs  []string
}

func (tb *tab) problems() []string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	var out []string
	out = append(out, tb.errors...)
	for _, r := range tb.requests {
		out = append(out, "network request: "+r)
	}
	for _, d := range tb.dialogs {
		out = append(out, "dialog: "+d)
	}
	return out
}

// open writes the page to a file and loads it from its file:// URL in a
// new tab with the test's viewport, then waits until the script is ready.
func open(t *testing.T, browser context.Context, html []byte, wait string) *tab {
	t.Helper()
	file := filepath.Join(t.TempDir(), "timeline.html")
	if err := os.WriteFile(file, html, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	ctx, cancelT := context.WithTimeout(ctx, 120*time.Second)
	t.Cleanup(cancelT)
	tb := &tab{ctx: ctx, url: "file://" + file}
	if err := chromedp.Listen(ctx, func(ev any) {
		tb.mu.Lock()
		defer tb.mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			tb.errors = append(tb.errors, fmt.Sprintf("exception at %d:%d: %s", d.LineNumber+1, d.ColumnNumber+1, msg))
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert || ev.Type == runtime.ConsoleAPICalledTypeWarning {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				tb.errors = append(tb.errors, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " ")))
			}
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
				tb.errors = append(tb.errors, fmt.Sprintf("browser log %s: %s %s", ev.Entry.Level, ev.Entry.Text, ev.Entry.URL))
			}
		case *network.EventRequestWillBeSent:
			if ev.Request.URL != tb.url {
				tb.requests = append(tb.requests, ev.Request.URL)
			}
		case *cdppage.EventJavascriptDialogOpening:
			tb.dialogs = append(tb.dialogs, ev.Message)
			go chromedp.Call(ctx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: false})
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(viewW, viewH), chromedp.Navigate(tb.url)); err != nil {
		t.Fatalf("loading the page: %v", err)
	}
	if wait != "" {
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](wait, chromedp.WithPollingTimeout(90*time.Second))); err != nil {
			t.Fatalf("waiting for %s: %v; the page said: %q", wait, err, tb.problems())
		}
	}
	return tb
}

const ready = `!!(window.leasecheckTimeline && window.leasecheckTimeline.ready)`

// seen is what the test reads off a loaded timeline.
type seen struct {
	VW, VH float64
	Marks  []struct {
		Violation                int
		OnAxis                   bool
		Left, Top, Right, Bottom float64
	}
	Story     string
	StoryRect rect
	Labels    []string
	Faults    []string
	Text      string
	Title     string
	Details   string
	Injected  int
}

type rect struct{ Left, Top, Right, Bottom float64 }

func (r rect) inside(w, h float64) bool {
	return r.Right > r.Left && r.Bottom > r.Top && r.Left >= 0 && r.Top >= 0 && r.Right <= w && r.Bottom <= h
}

const look = `(() => {
  const t = window.leasecheckTimeline, story = document.querySelector('#v0 .story');
  const box = e => { if (!e) return {}; const r = e.getBoundingClientRect(); return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}; };
  return {
    vw: window.innerWidth, vh: window.innerHeight,
    marks: t.marks(),
    story: story ? story.textContent : '', storyRect: box(story),
    labels: Array.from(document.querySelectorAll('#labels b'), b => b.textContent),
    faults: Array.from(document.querySelectorAll('#flist li'), li => li.textContent),
    text: document.body.innerText,
    title: document.title,
    details: document.getElementById('dbody').innerText,
    injected: document.querySelectorAll('img, svg, iframe, object, embed, a[href^="javascript"]').length + document.scripts.length - 2 +
      Array.from(document.querySelectorAll('*')).filter(e => Array.from(e.attributes).some(a => a.name.startsWith('on'))).length,
  };
})()`

func lookAt(t *testing.T, tb *tab) seen {
	t.Helper()
	s, err := chromedp.Run(tb.ctx, chromedp.Evaluate[seen](look))
	if err != nil {
		t.Fatalf("reading the page: %v", err)
	}
	return s
}

// checkFirstView asserts what a newcomer must see at once: the first
// violation's mark drawn inside the viewport, and its story too.
func checkFirstView(t *testing.T, s seen, wantStory string) {
	t.Helper()
	var onCanvas, onAxis bool
	for _, m := range s.Marks {
		if m.Violation != 0 {
			continue
		}
		r := rect{m.Left, m.Top, m.Right, m.Bottom}
		if !r.inside(s.VW, s.VH) {
			t.Errorf("the first violation's mark %+v is outside the %vx%v viewport", r, s.VW, s.VH)
		}
		if m.OnAxis {
			onAxis = true
		} else {
			onCanvas = true
		}
	}
	if !onCanvas || !onAxis {
		t.Errorf("the first violation is not drawn in the first view (on the rows: %v, on the axis: %v); marks %+v", onCanvas, onAxis, s.Marks)
	}
	if s.Story != wantStory {
		t.Errorf("the first story reads %q, want %q", s.Story, wantStory)
	}
	if !s.StoryRect.inside(s.VW, s.VH) {
		t.Errorf("the first story %+v is not inside the %vx%v viewport", s.StoryRect, s.VW, s.VH)
	}
}

func TestBrowserTimeline(t *testing.T) {
	browser := newBrowser(t)

	t.Run("the test sees errors, requests and dialogs", func(t *testing.T) {
		// The checks below assert that nothing goes wrong; this proves
		// they would notice.
		tb := open(t, browser, []byte(`<!DOCTYPE html><title>x</title><img src="http://127.0.0.1:9/x.png">`+
			`<script>console.error("said"); setTimeout(() => { alert("hi"); throw new Error("boom"); }, 0); window.done = true;</script>`), "window.done")
		deadline := time.Now().Add(10 * time.Second)
		for len(tb.problems()) < 4 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		got := strings.Join(tb.problems(), "\n")
		for _, want := range []string{"said", "boom", "network request: http://127.0.0.1:9/x.png", "dialog: hi"} {
			if !strings.Contains(got, want) {
				t.Errorf("the listener missed %q; it saw:\n%s", want, got)
			}
		}
	})

	for _, name := range cases {
		t.Run(name, func(t *testing.T) {
			in := loadCase(t, name)
			tb := open(t, browser, render(t, in, Options{}), ready)
			s := lookAt(t, tb)
			if p := tb.problems(); len(p) > 0 {
				t.Errorf("the page reported problems:\n%s", strings.Join(p, "\n"))
			}
			var first string
			if len(in.Check.Violations) > 0 {
				first = in.Check.Violations[0].Explanation
			}
			checkFirstView(t, s, first)
			// every process named, as in the history
			for _, op := range in.History.Ops {
				found := false
				for _, l := range s.Labels {
					found = found || l == op.Process
				}
				if !found {
					t.Errorf("no row is named %q (rows: %q)", op.Process, s.Labels)
				}
			}
			// every fault named
			if len(s.Faults) != len(in.History.Faults) {
				t.Errorf("the page lists %d faults, the history has %d: %q", len(s.Faults), len(in.History.Faults), s.Faults)
			}
			for i, f := range in.History.Faults {
				if i < len(s.Faults) && !(strings.HasPrefix(s.Faults[i], f.Kind) && strings.Contains(s.Faults[i], " on "+f.Target) && strings.Contains(s.Faults[i], f.Detail)) {
					t.Errorf("fault %d reads %q; want its kind %q, target %q and detail", i, s.Faults[i], f.Kind, f.Target)
				}
			}
			for _, v := range in.Extra {
				if !strings.Contains(s.Text, v.Explanation) {
					t.Errorf("the finding %s is not told on the page", v.Property)
				}
			}
			if !strings.Contains(s.Text, in.Replay) {
				t.Errorf("the replay command %q is not on the page", in.Replay)
			}
			checkOneUnit(t, tb, s, in.History)
			if name == "xss" {
				if s.Title != in.Title+" — leasecheck timeline" {
					t.Errorf("document.title = %q", s.Title)
				}
				if s.Injected != 0 {
					t.Errorf("%d elements were injected by the history's strings", s.Injected)
				}
			}
			if file, ok := screenshotOf[name]; ok && *screenshots {
				png, err := chromedp.Run(tb.ctx, chromedp.CaptureScreenshot())
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join("..", "..", "docs", file), png, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// Use it: zoom, pan, walk the violations, click the mark.
			var clickAt rect
			for _, m := range s.Marks {
				if m.Violation == 0 && !m.OnAxis {
					clickAt = rect{m.Left, m.Top, m.Right, m.Bottom}
				}
			}
			steps := []chromedp.Action[chromedp.Void]{
				chromedp.MouseClickXY((clickAt.Left+clickAt.Right)/2, clickAt.Bottom-6),
				chromedp.KeyEvent("n"), chromedp.KeyEvent("p"), chromedp.KeyEvent("+"), chromedp.KeyEvent("-"),
				chromedp.KeyEvent("0"),
				chromedp.Click(chromedp.ID("zoomin")), chromedp.Click(chromedp.ID("fit")),
				chromedp.DragAndDropXY(700, clickAt.Bottom-6, 500, clickAt.Bottom-6, 5),
			}
			if err := chromedp.Do(tb.ctx, steps...); err != nil {
				t.Fatalf("using the page: %v", err)
			}
			after := lookAt(t, tb)
			if !strings.Contains(after.Details, "line") && len(in.Check.Violations) > 0 {
				t.Errorf("clicking the first violation's op shows no details: %q", after.Details)
			}
			// The details give the op's times in ms too, as the story does.
			if strings.Contains(after.Details, "call") {
				ms := timefmt.Times{Unit: in.History.Header.TimeUnit}
				found := false
				for _, op := range in.History.Ops {
					found = found || strings.Contains(after.Details, ms.Num(op.Call)+" ms")
				}
				if !found {
					t.Errorf("the details give no op's call in ms (as the story would: %s): %q", ms.Dur(in.History.Ops[0].Call), after.Details)
				}
			}
			if p := tb.problems(); len(p) > 0 {
				t.Errorf("using the page reported problems:\n%s", strings.Join(p, "\n"))
			}
		})
	}

	t.Run("odd histories draw without an error", func(t *testing.T) {
		const t0 = 1_760_000_000_000_000_000
		ns := hist(0, "A acquire ttl=10 fence=1 call=0 ret=1 at=0 ok", "A write fence=1 value=v call=2 ret=3 at=2 ok")
		for i := range ns.Ops {
			ns.Ops[i].Call += t0
			ns.Ops[i].Return += t0
			ns.Ops[i].At += t0
		}
		ns.Header.TimeUnit = "ns"
		unanswered := hist(2,
			"A acquire ttl=10 call=0",
			"A acquire ttl=10 fence=1 call=1 ret=4 ok",
			"B renew ttl=10 call=3",
			"B release call=5")
		unanswered.Faults = []model.FaultRecord{{Kind: "partition", Target: "B", Peer: "coordinator", Start: 2, End: 9, HasEnd: true},
			{Kind: "delay", Target: "somewhere", Start: 1, Amount: 3, Partial: true, Detail: "only half"}}
		twoKeys := readHistory(t, "testdata/bad-linearizable-two-keys.jsonl")
		for _, tc := range []struct {
			name string
			in   Input
		}{
			{"empty", Input{History: &model.History{Header: model.DefaultHeader()}}},
			{"no check", Input{History: twoKeys}},
			{"two keys", Input{History: twoKeys, Check: mustCheck(context.Background(), twoKeys, checker.Options{})}},
			{"nanoseconds since 1970", Input{History: ns, Check: mustCheck(context.Background(), ns, checker.Options{})}},
			{"unanswered ops, a partition, a fault on an unknown target, a belief of a process with no op", Input{History: unanswered,
				Check:   mustCheck(context.Background(), unanswered, checker.Options{}),
				Beliefs: []Belief{{Process: "C", Fence: 3, From: 2, To: 8, Open: true}},
				Extra:   []Finding{{Property: "liveness-recovery", Explanation: "nobody got the lease", From: 4, To: 9}}}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				tb := open(t, browser, render(t, tc.in, Options{}), ready)
				s := lookAt(t, tb)
				// walk everything: every violation, both keys, zoom out and in
				if err := chromedp.Do(tb.ctx, chromedp.KeyEvent("n"), chromedp.KeyEvent("0"), chromedp.KeyEvent("-"), chromedp.KeyEvent("+"),
					chromedp.KeyEvent("ArrowLeft"), chromedp.KeyEvent("ArrowDown"),
					chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById('keysel'); if (s.options.length > 1) { s.value = '1'; s.dispatchEvent(new Event('change')); } })()`),
					chromedp.MouseClickXY(600, 300), chromedp.MouseClickXY(400, 200)); err != nil {
					t.Fatal(err)
				}
				if p := tb.problems(); len(p) > 0 {
					t.Errorf("the page reported problems:\n%s", strings.Join(p, "\n"))
				}
				for _, op := range tc.in.History.Ops {
					if !strings.Contains(s.Text, op.Process) {
						t.Errorf("process %q not named", op.Process)
					}
				}
				if len(s.Faults) != max(1, len(tc.in.History.Faults)) { // "no fault records" is one item
					t.Errorf("faults listed: %q", s.Faults)
				}
				checkOneUnit(t, tb, s, tc.in.History)
			})
		}
	})

	t.Run("100k operations", func(t *testing.T) {
		if testing.Short() {
			t.Skip("-short: a 100k-op page")
		}
		h := genHistory(100_000, 12, 1, true, 1)
		r := mustCheck(context.Background(), h, checker.Options{})
		if !r.Violated() {
			t.Fatal("the generated history has no violation")
		}
		html := render(t, Input{Title: "100k", History: h, Check: r}, Options{})
		start := time.Now()
		tb := open(t, browser, html, ready)
		t.Logf("a %d-op page of %.1f MB loaded and drew in %v", len(h.Ops), float64(len(html))/1e6, time.Since(start).Round(time.Millisecond))
		if p := tb.problems(); len(p) > 0 {
			t.Errorf("the page reported problems:\n%s", strings.Join(p, "\n"))
		}
		checkFirstView(t, lookAt(t, tb), r.Violations[0].Explanation)
		start = time.Now()
		if err := chromedp.Do(tb.ctx, chromedp.Click(chromedp.ID("fit"))); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(tb.ctx, chromedp.Poll[bool](`(() => { const v = window.leasecheckTimeline.view; return !!v && v.to - v.from > 100000; })()`)); err != nil {
			t.Fatal(err)
		}
		t.Logf("the whole 100k-op history drawn in %v", time.Since(start).Round(time.Millisecond))
		if p := tb.problems(); len(p) > 0 {
			t.Errorf("the page reported problems:\n%s", strings.Join(p, "\n"))
		}
	})

	t.Run("a window around the violations says what it left out", func(t *testing.T) {
		h := genHistory(20_000, 8, 1, true, 3)
		r := mustCheck(context.Background(), h, checker.Options{})
		tb := open(t, browser, render(t, Input{History: h, Check: r}, Options{MaxOps: 2000}), ready)
		s := lookAt(t, tb)
		if p := tb.problems(); len(p) > 0 {
			t.Errorf("the page reported problems:\n%s", strings.Join(p, "\n"))
		}
		if !strings.Contains(s.Text, "This history has 20,000 operations; the page draws") {
			t.Errorf("the page does not say what it left out")
		}
		checkFirstView(t, s, r.Violations[0].Explanation)
	})
}

// tickLabel is a tick of the time axis: ms, no thousands separator (a
// "+" from the start of a history whose times are counted from 1970).
var tickLabel = regexp.MustCompile(`^\+?-?\d+(\.\d+)?$`)

// checkOneUnit asserts the page speaks the stories' unit, ms at the
// history's precision (internal/timefmt), wherever it gives a time: the
// axis, its ticks, the clock uncertainty in the header; and names the unit
// the history was recorded in when it is not ms.
func checkOneUnit(t *testing.T, tb *tab, s seen, h *model.History) {
	t.Helper()
	labels := tb.axisLabels(t)
	if len(labels) == 0 || labels[0] != "time (ms)" {
		t.Errorf("the axis reads %q, want \"time (ms)\" first", labels)
	}
	ticks := 0
	for _, l := range labels[1:] {
		if strings.HasPrefix(l, "since ") {
			continue
		}
		ticks++
		if !tickLabel.MatchString(l) {
			t.Errorf("axis tick %q is not a time in ms", l)
		}
	}
	if ticks == 0 && len(h.Ops) > 0 {
		t.Errorf("the axis has no tick: %q", labels)
	}
	ms := timefmt.Times{Unit: h.Header.TimeUnit}
	if want := "clock uncertainty u = " + ms.Num(h.Header.ClockUncertainty) + " ms"; !strings.Contains(s.Text, want) {
		t.Errorf("the header does not say %q", want)
	}
	if unit := h.Header.TimeUnit; unit != "" && unit != "ms" && !strings.Contains(s.Text, "recorded in ") {
		t.Errorf("the header does not name the unit the history was recorded in (%s)", unit)
	}
}

// axisLabels is what the axis canvas drew, label by label.
func (tb *tab) axisLabels(t *testing.T) []string {
	t.Helper()
	s, err := chromedp.Run(tb.ctx, chromedp.Evaluate[[]string](`window.leasecheckTimeline.axisLabels()`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
