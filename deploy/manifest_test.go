package deploy

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// buildLeasecheck builds the command into a directory of its own, to put
// first on PATH as the image does (/usr/local/bin/leasecheck).
func buildLeasecheck(t *testing.T) (dir, bin string) {
	t.Helper()
	dir = t.TempDir()
	bin = filepath.Join(dir, "leasecheck")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/leasecheck").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dir, bin
}

func decodeStrict(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func envOf(c corev1.Container) map[string]string {
	m := map[string]string{}
	for _, e := range c.Env {
		m[e.Name] = e.Value
	}
	return m
}

// shell runs a script as the container does (/bin/sh -c) with env.
func shell(t *testing.T, script string, env map[string]string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// unsharded is what one run over the whole range prints.
func unsharded(t *testing.T, bin string, seeds int) []byte {
	t.Helper()
	cmd := exec.Command(bin, "run", "--seeds", strconv.Itoa(seeds), "--timeout", "0", "--progress=false", "--out", t.TempDir(), "--json")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("unsharded run: %v", err)
	}
	return out
}

// TestKubernetesIndexedJob decodes the manifests with the Kubernetes API
// types, checks the Indexed Job's contract (completionMode Indexed, as many
// completions as shards, the results volume shared with the merge step),
// then runs every index's command line locally with JOB_COMPLETION_INDEX
// set, and the merge step's: the merged summary is byte for byte the
// unsharded run's. The manifest's SEEDS and SHARDS (10^8 over 1000) are
// scaled down to what a test can run; RESULTS points at a temporary
// directory; the command lines are the manifest's own.
func TestKubernetesIndexedJob(t *testing.T) {
	var pvc corev1.PersistentVolumeClaim
	var sweep, merge batchv1.Job
	decodeStrict(t, "kubernetes/results-pvc.yaml", &pvc)
	decodeStrict(t, "kubernetes/sweep-job.yaml", &sweep)
	decodeStrict(t, "kubernetes/merge-job.yaml", &merge)

	if pvc.Kind != "PersistentVolumeClaim" || sweep.Kind != "Job" || merge.Kind != "Job" || sweep.APIVersion != "batch/v1" {
		t.Fatalf("kinds: %s %s/%s %s", pvc.Kind, sweep.APIVersion, sweep.Kind, merge.Kind)
	}
	s := sweep.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Fatalf("sweep: completionMode %v, want Indexed", s.CompletionMode)
	}
	if len(s.Template.Spec.Containers) != 1 || len(merge.Spec.Template.Spec.Containers) != 1 {
		t.Fatal("want one container per pod")
	}
	c := s.Template.Spec.Containers[0]
	env := envOf(c)
	shards, err := strconv.Atoi(env["SHARDS"])
	if err != nil || s.Completions == nil || int(*s.Completions) != shards {
		t.Fatalf("sweep: completions %v, SHARDS %q: must be equal", s.Completions, env["SHARDS"])
	}
	if seeds, err := strconv.Atoi(env["SEEDS"]); err != nil || seeds < shards {
		t.Fatalf("sweep: SEEDS %q", env["SEEDS"])
	}
	if s.Parallelism == nil || *s.Parallelism < 1 || s.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("sweep: parallelism %v, restartPolicy %q", s.Parallelism, s.Template.Spec.RestartPolicy)
	}
	mc := merge.Spec.Template.Spec.Containers[0]
	for name, pod := range map[string]corev1.PodSpec{"sweep": s.Template.Spec, "merge": merge.Spec.Template.Spec} {
		ctr := pod.Containers[0]
		if len(pod.Volumes) != 1 || pod.Volumes[0].PersistentVolumeClaim == nil || pod.Volumes[0].PersistentVolumeClaim.ClaimName != pvc.Name {
			t.Errorf("%s: the results volume is not the claim %q", name, pvc.Name)
		}
		if len(ctr.VolumeMounts) != 1 || ctr.VolumeMounts[0].MountPath != envOf(ctr)["RESULTS"] || ctr.VolumeMounts[0].Name != pod.Volumes[0].Name {
			t.Errorf("%s: RESULTS %q is not where the volume is mounted (%+v)", name, envOf(ctr)["RESULTS"], ctr.VolumeMounts)
		}
		if len(ctr.Command) != 2 || ctr.Command[0] != "/bin/sh" || ctr.Command[1] != "-c" || len(ctr.Args) != 1 {
			t.Fatalf("%s: command %q args %d: want /bin/sh -c SCRIPT", name, ctr.Command, len(ctr.Args))
		}
	}
	if !hasAccessMode(pvc, corev1.ReadWriteMany) {
		t.Errorf("the results claim is not ReadWriteMany: the pods cannot all mount it")
	}

	binDir, bin := buildLeasecheck(t)
	const seeds, localShards = 3000, 6
	results := t.TempDir()
	run := map[string]string{"SEEDS": strconv.Itoa(seeds), "SHARDS": strconv.Itoa(localShards), "RESULTS": results,
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
			t.Fatalf("index %d: %v\n%s", i, err, out)
		}
	}
	menv := envOf(mc)
	for k, v := range run {
		menv[k] = v
	}
	if out, err := shell(t, mc.Args[0], menv); err != nil {
		t.Fatalf("merge: %v\n%s", err, out)
	} else if !strings.Contains(string(out), "OK: every property held on every seed") {
		t.Errorf("merge's log has no verdict:\n%s", out)
	}
	got, err := os.ReadFile(filepath.Join(results, "merged", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if want := unsharded(t, bin, seeds); !bytes.Equal(got, want) {
		t.Fatalf("merged summary differs from the unsharded run:\n%s\n%s", got, want)
	}
	// A shard that did not finish is reported, not skipped: the last one
	// (which leaves no gap between the summaries there), then a middle one.
	for _, i := range []int{localShards, 3} {
		os.Remove(filepath.Join(results, fmt.Sprintf("shard-%d", i), "summary.json"))
		if out, err := shell(t, mc.Args[0], menv); err == nil {
			t.Errorf("merge with shard %d missing succeeded:\n%s", i, out)
		} else if !strings.Contains(string(out), fmt.Sprintf("shard %d/%d", i, localShards)) {
			t.Errorf("merge with shard %d missing does not say so:\n%s", i, out)
		}
	}
}

func hasAccessMode(pvc corev1.PersistentVolumeClaim, m corev1.PersistentVolumeAccessMode) bool {
	for _, x := range pvc.Spec.AccessModes {
		if x == m {
			return true
		}
	}
	return false
}

// workflow is the part of a GitHub Actions workflow the test reads.
type workflow struct {
	Env  map[string]string `json:"env"`
	Jobs map[string]struct {
		Needs    any `json:"needs"`
		Strategy struct {
			Matrix struct {
				Shard []int `json:"shard"`
			} `json:"matrix"`
		} `json:"strategy"`
		Steps []struct {
			Name string `json:"name"`
			Run  string `json:"run"`
		} `json:"steps"`
	} `json:"jobs"`
}

// TestCIMatrixWorkflow: the workflow's matrix has one entry per shard, and
// its shard and merge steps, run locally (the leasecheck binary for `go
// run ./cmd/leasecheck`, the matrix value and the seeds input substituted,
// artifacts as directories), merge into the unsharded run's summary.
func TestCIMatrixWorkflow(t *testing.T) {
	b, err := os.ReadFile("github-actions/sweep.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf workflow
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	shard, merge := wf.Jobs["shard"], wf.Jobs["merge"]
	shards, _ := strconv.Atoi(wf.Env["SHARDS"])
	if shards < 2 || len(shard.Strategy.Matrix.Shard) != shards || fmt.Sprint(merge.Needs) != "shard" {
		t.Fatalf("matrix %v, SHARDS %q, merge needs %v", shard.Strategy.Matrix.Shard, wf.Env["SHARDS"], merge.Needs)
	}
	script := func(steps []struct {
		Name string `json:"name"`
		Run  string `json:"run"`
	}) string {
		for _, s := range steps {
			if s.Run != "" {
				return s.Run
			}
		}
		t.Fatal("no run step")
		return ""
	}
	binDir, bin := buildLeasecheck(t)
	const seeds = 1600
	root := t.TempDir()
	env := map[string]string{"SHARDS": wf.Env["SHARDS"], "PATH": binDir + string(os.PathListSeparator) + os.Getenv("PATH")}
	subst := func(s string, shard int) string {
		s = strings.ReplaceAll(s, "go run ./cmd/leasecheck", "leasecheck")
		s = strings.ReplaceAll(s, "${{ inputs.seeds }}", strconv.Itoa(seeds))
		return strings.ReplaceAll(s, "${{ matrix.shard }}", strconv.Itoa(shard))
	}
	for _, i := range shard.Strategy.Matrix.Shard {
		dir := filepath.Join(root, "job", strconv.Itoa(i))
		os.MkdirAll(dir, 0o755)
		if out, err := shell(t, "cd "+dir+" && "+subst(script(shard.Steps), i), env); err != nil {
			t.Fatalf("shard %d: %v\n%s", i, err, out)
		}
		// upload-artifact name shard-N, download-artifact into parts/shard-N.
		if err := os.Rename(filepath.Join(dir, "out"), filepath.Join(root, "parts", fmt.Sprintf("shard-%d", i))); err != nil {
			os.MkdirAll(filepath.Join(root, "parts"), 0o755)
			if err := os.Rename(filepath.Join(dir, "out"), filepath.Join(root, "parts", fmt.Sprintf("shard-%d", i))); err != nil {
				t.Fatal(err)
			}
		}
	}
	if out, err := shell(t, "cd "+root+" && "+subst(script(merge.Steps), 0), env); err != nil {
		t.Fatalf("merge: %v\n%s", err, out)
	}
	got, err := os.ReadFile(filepath.Join(root, "merged", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if want := unsharded(t, bin, seeds); !bytes.Equal(got, want) {
		t.Fatalf("merged summary differs from the unsharded run:\n%s\n%s", got, want)
	}
}
