// Package deploy holds no code: it is how leasecheck sweeps run on engines
// people already run, and the test that keeps those files honest.
//
//   - kubernetes/: an Indexed Job (sweep-job.yaml: completionMode Indexed,
//     the shard from JOB_COMPLETION_INDEX, results on a volume,
//     results-pvc.yaml) and the merge step (merge-job.yaml);
//   - kubernetes/explore-job.yaml: an exploration of one bounded space as
//     an Indexed Job (explore --shard, one part file per index) and its
//     merge step (explore-merge-job.yaml: leasecheck merge of the parts);
//   - github-actions/sweep.yml: the same on a CI matrix;
//   - Dockerfile: the image both run.
//
// manifest_test.go decodes the manifests with the Kubernetes API types
// (k8s.io/api, strictly: an unknown or misspelt field fails), runs each
// index's command line locally with JOB_COMPLETION_INDEX set, then the merge
// step's, and compares the merged summary with one unsharded run, byte for
// byte; it runs the workflow's shard and merge steps the same way.
// explore_manifest_test.go does the same for the exploration's Job: the
// merged verdict equals one unsharded explore's, on the reference and on a
// planted bug.
package deploy
