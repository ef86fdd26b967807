package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/leasecheck/leasecheck/internal/campaign"
)

func init() {
	register("merge", command{
		summary: "merge a sweep's parts (run --shard I/N --json) or an exploration's (explore --shard I/N) into the unsharded run's result",
		run:     runMerge,
	})
}

// savedExts are the files `run` saves per failing seed.
var savedExts = []string{".scenario.json", ".history.jsonl", ".html", ".md", ".trace.txt"}

func runMerge(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "also gather into `DIR` the saved failures the unsharded run would have saved, found beside each summary FILE")
	maxSaved := fs.Int("save", campaign.DefaultMaxSaved, "as run's --save: how many failing seeds the unsharded run saves")
	text := fs.Bool("text", false, "print the table for people instead of the JSON summary")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: leasecheck merge [--out DIR] [--text] FILE...")
		fmt.Fprintln(fs.Output(), "\nGiven the part files of a sharded exploration (explore --shard I/N --part FILE),\nit combines them into the exploration's verdict: the bytes `explore --json`\nprints as \"verdict\" for the unsharded run (distinct states per space, the\ncounterexample's state, properties and steps); --out saves the counterexample\nthere. Every part 1..N exactly once, of one plan, bound and split rule.")
		fmt.Fprintln(fs.Output(), "\nCombines the --json summaries of disjoint parts of one sweep (run --shard I/N,\nor consecutive --first/--seeds ranges) into the summary of the whole: the same\nbytes as `run --json` over the whole range. The parts must be of one\nimplementation and fault kinds and tile one seed range. A part's saved\nfailures are looked for in its summary's directory. Exit status: that of\nthe whole run (0, 1, 3), or 2 when the parts do not fit together.")
		fs.PrintDefaults()
	}
	files, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if len(files) == 0 {
		return argError(stderr, "merge", files, "one or more summary FILEs (run --json output)", fs.Usage)
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "leasecheck merge: %v\n", err)
		return exitUsage
	}
	// Exploration parts (explore --shard I/N) merge into an exploration's
	// verdict; summaries into a sweep's.
	if isPart, err := explorePartFiles(files); err != nil {
		return fail(err)
	} else if isPart {
		return mergeExplore(files, *out, *text, stdout, stderr)
	}
	parts := make([]*campaign.Summary, len(files))
	dirOf := map[*campaign.Summary]string{}
	for i, f := range files {
		s, err := readSummaryFile(f)
		if err != nil {
			return fail(err)
		}
		parts[i] = s
		dirOf[s] = filepath.Dir(f)
	}
	sum, err := campaign.Merge(parts...)
	if err != nil {
		return fail(err)
	}
	if *out != "" && *maxSaved != 0 {
		if err := gatherSaved(*out, sum, parts, dirOf, *maxSaved, stderr); err != nil {
			return fail(err)
		}
	}
	if *text {
		sum.WriteText(stdout, time.Duration(0))
	} else if err := sum.WriteJSON(stdout); err != nil {
		return fail(err)
	}
	return sum.Status()
}

func readSummaryFile(path string) (*campaign.Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := campaign.ReadSummary(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// gatherSaved copies into dir the files of the failing seeds the unsharded
// run saves: its first max failing seeds. Each part saved its own first max,
// which include every one of those in its range. A story's replay command
// is rewritten to the new place.
func gatherSaved(dir string, sum *campaign.Summary, parts []*campaign.Summary, dirOf map[*campaign.Summary]string, max int, stderr io.Writer) error {
	seeds := sum.FailedSeeds
	if max > 0 && len(seeds) > max {
		seeds = seeds[:max]
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, seed := range seeds {
		var from string
		for _, p := range parts {
			if seed >= p.FirstSeed && seed < p.FirstSeed+uint64(p.Seeds) {
				from = dirOf[p]
			}
		}
		name := campaign.FailureName(sum.Implementation, seed)
		var files []campaign.NewFile
		for _, ext := range savedExts {
			src, dst := filepath.Join(from, name+ext), filepath.Join(dir, name+ext)
			b, err := os.ReadFile(src)
			if errors.Is(err, os.ErrNotExist) {
				continue
			} else if err != nil {
				return err
			}
			if ext == ".md" || ext == ".html" {
				b = []byte(strings.ReplaceAll(string(b), filepath.Join(from, name+".scenario.json"), filepath.Join(dir, name+".scenario.json")))
			}
			files = append(files, campaign.NewFile{Path: dst, Write: func(w io.Writer) error { _, err := w.Write(b); return err }})
		}
		// As every save: never over another failure's files.
		if err := campaign.WriteNew(files...); err != nil {
			return err
		}
		if len(files) == 0 {
			fmt.Fprintf(stderr, "leasecheck merge: seed %d failed, but %s/%s.* is not there (was the part run with --out %s?)\n", seed, from, name, from)
		}
	}
	return nil
}
