package checker

import (
	"strconv"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/internal/timed"
	"github.com/leasecheck/leasecheck/model"
)

// dataKops prepares a history's only key as the checker does.
func dataKops(t *testing.T, h *model.History) []kop {
	t.Helper()
	c := timed.Compile(h)
	ko := &c.Keys[0]
	kops, _ := prepareKey(h, c.Names, ko, factsOf(h, ko.Index))
	return kops
}

// The projections refute each of the zones' conditions, a fence that went
// back and an owner with no grant, and nothing the brute force explains:
// every history here is judged by both, and they must agree.
func TestRefuteProjections(t *testing.T) {
	const hold = `{"format":"leasecheck/history","version":1}
{"process":"A","op":"acquire","ttl":1000,"fence":1,"call":0,"return":0,"ok":true}
`
	w := func(value string, call, ret int, ok bool) string {
		s := `{"process":"W` + value + `","owner":"A","op":"write","fence":1,"value":"` + value + `","call":` + itoa(call)
		if ret < 0 {
			return s + "}\n"
		}
		return s + `,"return":` + itoa(ret) + `,"ok":` + map[bool]string{true: "true", false: "false,\"error\":\"stale-fence\""}[ok] + "}\n"
	}
	r := func(proc, value string, call, ret int) string {
		v := ""
		if value != "" {
			v = `"value":"` + value + `",`
		}
		return `{"process":"` + proc + `","op":"read",` + v + `"call":` + itoa(call) + `,"return":` + itoa(ret) + `,"ok":true}` + "\n"
	}
	for _, tc := range []struct {
		name    string
		ops     string
		refuted string // "" : not refuted
	}{
		{"a read of a refused write", w("v1", 1, 2, false) + r("R", "v1", 3, 4), "no write of it took effect"},
		{"a read that returned before its write was called", r("R", "v1", 1, 2) + w("v1", 3, 4, true), "before line"},
		{"two values current at once", w("v1", 1, 2, true) + w("v2", 3, 4, true) + r("R", "v1", 10, 11) + r("S", "v2", 12, 13), "at once"},
		{"a write inside another value's span", w("v1", 1, 2, true) + w("v2", 4, 5, true) + r("R", "v1", 10, 11), "within that span"},
		{"nothing read after a write returned", w("v1", 1, 2, true) + r("R", "", 5, 6), "within that span"},
		{"concurrent writes, either order", w("v1", 1, 5, true) + w("v2", 2, 6, true) + r("R", "v2", 7, 8) + r("S", "v1", 3, 4), ""},
		{"an unanswered write read later", w("v1", 1, -1, false) + r("R", "v1", 5, 6), ""},
		{"an unanswered write nobody read", w("v1", 1, 2, true) + w("v2", 3, -1, false) + r("R", "v1", 10, 11), ""},
		{"nothing read before any write", r("R", "", 0, 1) + w("v1", 2, 3, true) + r("S", "v1", 4, 5), ""},
		// The fences and the holder (projections.go).
		{"a write under a passed fence", `{"process":"B","op":"acquire","ttl":1000,"fence":2,"call":1,"return":2,"ok":true}` + "\n" + w("v1", 3, 4, true), "fences alone"},
		{"a fence granted twice", `{"process":"B","op":"acquire","ttl":1000,"fence":1,"call":1,"return":2,"ok":true}` + "\n", "fences alone"},
		{"a write by an owner never granted", `{"process":"C","op":"write","fence":1,"value":"c","call":1,"return":2,"ok":true}` + "\n", "no acquire of C's"},
		{"a write by an owner granted only later", `{"process":"C","op":"write","fence":1,"value":"c","call":1,"return":2,"ok":true}` + "\n" +
			`{"process":"D","owner":"C","op":"acquire","ttl":10,"call":3}` + "\n", "no acquire of C's"},
		{"a write by an owner whose acquire never answered", `{"process":"A","op":"release","fence":1,"call":0,"return":0,"ok":true}` + "\n" +
			`{"process":"D","owner":"C","op":"acquire","ttl":10,"call":0}` + "\n" +
			`{"process":"C","op":"write","fence":2,"value":"c","call":1,"return":2,"ok":true}` + "\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := model.ReadHistory(strings.NewReader(hold+tc.ops), tc.name)
			if err != nil {
				t.Fatal(err)
			}
			f := refuteProjections("", dataKops(t, h), timed.RulesOf(h.Header))
			switch {
			case tc.refuted == "" && f != nil:
				t.Fatalf("refuted: %s", f.Explanation)
			case tc.refuted != "" && f == nil:
				t.Fatalf("not refuted, want %q", tc.refuted)
			case f != nil && !strings.Contains(f.Explanation, tc.refuted):
				t.Fatalf("explanation %q, want it to say %q", f.Explanation, tc.refuted)
			}
			if brute := bruteLinearizable(h); brute != (f == nil) {
				t.Fatalf("the brute force says linearizable %v, the zones refuted %v", brute, f != nil)
			}
			if got := check(h).Verdict(Linearizable); (got == Violated) != (tc.refuted != "") {
				t.Fatalf("the checker says %v", got)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
