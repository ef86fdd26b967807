package deploy

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestKubernetesExploreJob decodes the exploration's Indexed Job and its
// merge step with the Kubernetes API types (strictly), checks the Indexed
// Job's contract, then runs every index's command line locally with
// JOB_COMPLETION_INDEX set, and the merge step's: the merged result's
// verdict is byte for byte the "verdict" of one unsharded
// `leasecheck explore SPACE --json`. The manifest's SPACE (the 3-holder,
// 2-fault space) and SHARDS (64) are scaled down to spaces a test explores
// in seconds — the reference, where the verdict is the distinct states,
// and a planted bug, where it is the counterexample's state — with the
// manifest's own command lines and split rule (WIDTH).
func TestKubernetesExploreJob(t *testing.T) {
	var pvc corev1.PersistentVolumeClaim
	var job, merge batchv1.Job
	decodeStrict(t, "kubernetes/results-pvc.yaml", &pvc)
	decodeStrict(t, "kubernetes/explore-job.yaml", &job)
	decodeStrict(t, "kubernetes/explore-merge-job.yaml", &merge)
	s := job.Spec
	if job.Kind != "Job" || job.APIVersion != "batch/v1" || merge.Kind != "Job" {
		t.Fatalf("kinds: %s/%s %s", job.APIVersion, job.Kind, merge.Kind)
	}
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Fatalf("explore: completionMode %v, want Indexed", s.CompletionMode)
	}
	if len(s.Template.Spec.Containers) != 1 || len(merge.Spec.Template.Spec.Containers) != 1 {
		t.Fatal("want one container per pod")
	}
	c, mc := s.Template.Spec.Containers[0], merge.Spec.Template.Spec.Containers[0]
	env := envOf(c)
	shards, err := strconv.Atoi(env["SHARDS"])
	if err != nil || s.Completions == nil || int(*s.Completions) != shards {
		t.Fatalf("explore: completions %v, SHARDS %q: must be equal", s.Completions, env["SHARDS"])
	}
	if env["SPACE"] == "" || env["WIDTH"] == "" || env["MAX_MEMORY"] == "" {
		t.Fatalf("explore: SPACE %q, WIDTH %q, MAX_MEMORY %q", env["SPACE"], env["WIDTH"], env["MAX_MEMORY"])
	}
	if s.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("explore: restartPolicy %q", s.Template.Spec.RestartPolicy)
	}
	for name, pod := range map[string]corev1.PodSpec{"explore": s.Template.Spec, "merge": merge.Spec.Template.Spec} {
		ctr := pod.Containers[0]
		if len(pod.Volumes) != 1 || pod.Volumes[0].PersistentVolumeClaim == nil || pod.Volumes[0].PersistentVolumeClaim.ClaimName != pvc.Name {
			t.Errorf("%s: the results volume is not the claim %q", name, pvc.Name)
		}
		if len(ctr.VolumeMounts) != 1 || ctr.VolumeMounts[0].MountPath != envOf(ctr)["RESULTS"] {
			t.Errorf("%s: RESULTS %q is not where the volume is mounted", name, envOf(ctr)["RESULTS"])
		}
		if len(ctr.Command) != 2 || ctr.Command[0] != "/bin/sh" || ctr.Command[1] != "-c" || len(ctr.Args) != 1 {
			t.Fatalf("%s: command %q args %d: want /bin/sh -c SCRIPT", name, ctr.Command, len(ctr.Args))
		}
	}
	if lim, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok || lim.Cmp(c.Resources.Requests[corev1.ResourceMemory]) < 0 {
		t.Errorf("explore: memory limit %v below the request", c.Resources.Limits)
	}

	binDir, bin := buildLeasecheck(t)
	const localShards = 4
	for _, tc := range []struct {
		space, verdict string
		status         int
	}{
		{"--faults pause,crash --max-faults 1", "OK: the whole bounded space was explored", 0},
		{"--mutant fence-not-bumped", "FAIL: linearizable", 1},
	} {
		results := t.TempDir()
		run := map[string]string{"SPACE": tc.space, "SHARDS": strconv.Itoa(localShards), "RESULTS": results,
			"PATH": binDir + string(os.PathListSeparator) + os.Getenv("PATH")}
		for i := 0; i < localShards; i++ {
			e := map[string]string{"JOB_COMPLETION_INDEX": strconv.Itoa(i)}
			for k, v := range env {
				e[k] = v
			}
			for k, v := range run {
				e[k] = v
			}
			if out, err := shell(t, c.Args[0], e); err != nil {
				t.Fatalf("%s: index %d: %v\n%s", tc.space, i, err, out)
			}
		}
		menv := envOf(mc)
		for k, v := range run {
			menv[k] = v
		}
		out, err := shell(t, mc.Args[0], menv)
		if err != nil {
			t.Fatalf("%s: merge: %v\n%s", tc.space, err, out)
		} else if !strings.Contains(string(out), tc.verdict) {
			t.Errorf("%s: merge's log has no verdict %q:\n%s", tc.space, tc.verdict, out)
		}
		b, err := os.ReadFile(filepath.Join(results, "explore-merged", "result.json"))
		if err != nil {
			t.Fatal(err)
		}
		got, want := verdictOf(t, b), verdictOf(t, unshardedExplore(t, bin, tc.space, tc.status))
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: merged verdict differs from the unsharded run's:\n%s\n%s", tc.space, got, want)
		}
		if tc.status == 1 {
			if saved, _ := filepath.Glob(filepath.Join(results, "explore-merged", "*.scenario.json")); len(saved) != 1 {
				t.Errorf("%s: the merge step saved %v, want the counterexample", tc.space, saved)
			}
		}
		// A part that did not finish is reported, not skipped.
		os.Remove(filepath.Join(results, "explore", "part-2.json"))
		if out, err := shell(t, mc.Args[0], menv); err == nil {
			t.Errorf("%s: merge with part 2 missing succeeded:\n%s", tc.space, out)
		} else if !strings.Contains(string(out), "part 2/4 is missing") {
			t.Errorf("%s: merge with part 2 missing does not say so:\n%s", tc.space, out)
		}
	}
}

// unshardedExplore is what one process exploring space prints.
func unshardedExplore(t *testing.T, bin, space string, status int) []byte {
	t.Helper()
	args := append([]string{"explore"}, strings.Fields(space)...)
	cmd := exec.Command(bin, append(args, "--json", "--no-minimize", "--progress=false", "--out", t.TempDir())...)
	out, err := cmd.Output()
	if code := cmd.ProcessState.ExitCode(); code != status {
		t.Fatalf("unsharded explore %s: exit %d (%v), want %d", space, code, err, status)
	}
	return out
}

func verdictOf(t *testing.T, b []byte) []byte {
	t.Helper()
	var r struct {
		Verdict json.RawMessage `json:"verdict"`
	}
	if err := json.Unmarshal(b, &r); err != nil || len(r.Verdict) == 0 {
		t.Fatalf("no verdict (%v) in %.300s", err, b)
	}
	return r.Verdict
}
