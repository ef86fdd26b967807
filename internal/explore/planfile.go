package explore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/leasecheck/leasecheck/faults"
)

// A plan file is a JSON array of spaces, each a Bounds object in its JSON
// form ({"holders": 3, "faults": ["pause"], "max_faults": 1, ...}; a
// field left out keeps Space's default): the spaces ExplorePlan searches
// one after another. WritePlan writes the default plan in that form, a
// start for a larger sweep.

// maxPlanSpaces bounds a plan file: each space is a search of its own.
const maxPlanSpaces = 1000

// WritePlan writes plan as a plan file, one space a line.
func WritePlan(w io.Writer, plan []Bounds) error {
	var b bytes.Buffer
	b.WriteString("[\n")
	for i, s := range plan {
		j, err := json.Marshal(s)
		if err != nil {
			return err
		}
		b.WriteString("  ")
		b.Write(j)
		if i < len(plan)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]\n")
	_, err := w.Write(b.Bytes())
	return err
}

// LoadPlan reads a plan file. An error names the file, the line and the
// reason: invalid JSON, an unknown field, a value of the wrong type, a
// fault kind or semantics leasecheck does not know, a space whose world
// is invalid, an empty plan or one of more than 1000 spaces.
func LoadPlan(path string) ([]Bounds, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	plan, err := ParsePlan(data)
	if err != nil {
		return nil, fmt.Errorf("%s:%w", path, err)
	}
	return plan, nil
}

// ParsePlan parses a plan file's contents; its errors begin with the line
// ("12: ...").
func ParsePlan(data []byte) ([]Bounds, error) {
	at := func(off int64, format string, args ...any) error {
		off = min(max(off, 0), int64(len(data)))
		return fmt.Errorf("%d: %s", 1+bytes.Count(data[:off], []byte("\n")), fmt.Sprintf(format, args...))
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if tok, err := d.Token(); err != nil || tok != json.Delim('[') {
		if err == nil {
			err = fmt.Errorf("got %v", tok)
		}
		return nil, at(d.InputOffset(), "a plan is a JSON array of spaces: %v", jsonReason(err))
	}
	// first is where the space after off begins: past the separator the
	// decoder's offset was left at.
	first := func(off int64) int64 {
		for off < int64(len(data)) && bytes.IndexByte([]byte(", \t\r\n"), data[off]) >= 0 {
			off++
		}
		return off
	}
	var plan []Bounds
	for d.More() {
		start := d.InputOffset()
		var b Bounds
		if err := d.Decode(&b); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return nil, at(te.Offset, "space %d: field %q: a %s where a %s belongs", len(plan)+1, te.Field, te.Value, te.Type)
			}
			var se *json.SyntaxError
			if errors.As(err, &se) {
				return nil, at(se.Offset-1, "space %d: %v", len(plan)+1, jsonReason(err))
			}
			return nil, at(d.InputOffset(), "space %d: %v", len(plan)+1, jsonReason(err))
		}
		line := first(start)
		if err := validSpace(b); err != nil {
			return nil, at(line, "space %d: %v", len(plan)+1, err)
		}
		if plan = append(plan, b); len(plan) > maxPlanSpaces {
			return nil, at(line, "more than %d spaces: split the plan", maxPlanSpaces)
		}
	}
	if _, err := d.Token(); err != nil {
		return nil, at(d.InputOffset(), "%v", jsonReason(err))
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, at(d.InputOffset(), "text after the plan's closing ]")
	}
	if len(plan) == 0 {
		return nil, at(0, "the plan has no space")
	}
	return plan, nil
}

func jsonReason(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "invalid JSON: " + se.Error()
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return "the file ends inside the plan"
	}
	return err.Error()
}

// validSpace checks what Space would otherwise take silently, then the
// world Space makes of b.
func validSpace(b Bounds) error {
	switch {
	case b.Holders < 0 || b.MaxFaults < 0 || b.Adversary < 0 || b.Deviations < 0:
		return fmt.Errorf("holders, max_faults, adversary and deviations must be >= 0")
	case b.Holders > 8:
		return fmt.Errorf("holders %d: at most 8 (each holder multiplies the space)", b.Holders)
	case b.Semantics != "" && b.Semantics != "seed" && b.Semantics != "fenced-storage":
		return fmt.Errorf("semantics %q: seed or fenced-storage", b.Semantics)
	case b.TTL < 0 || b.MaxDelay < 0 || b.ReadEvery < 0 || b.RenewEvery < 0:
		return fmt.Errorf("ttl, max_delay, read_every and renew_every must be >= 0")
	case b.Margin < -1:
		return fmt.Errorf("margin %d: >= 0, or -1 for none", b.Margin)
	}
	for _, k := range b.Faults {
		if !slices.Contains(faults.AllKinds, k) {
			return fmt.Errorf("fault kind %q: not one the simulator injects (%v)", k, faults.AllKinds)
		}
	}
	for i, prog := range b.Work {
		for _, it := range prog {
			if it.Work < 0 || it.Writes < 0 {
				return fmt.Errorf("work of holder %d: work and writes must be >= 0", i+1)
			}
		}
	}
	return Space(b).Validate()
}
