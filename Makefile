# leasecheck — see README.md.
GO       ?= go
FUZZTIME ?= 60s
PKGS     := ./...

.PHONY: all build test test-all test-clientgo-patched test-examples check run soak layers exported api-check bench bench-explore bench-matrix bench-regress bench-slow bench-stream bench-memory explore-coverage fuzz vet fmt clean

all: vet test

build:
	$(GO) build -o bin/leasecheck ./cmd/leasecheck

# The tests, in two tiers. `make test` is the fast tier: go test -short,
# which runs no real server (embedded or not) and no real-time round
# (serverstest.Full skips those) and cuts the long sweeps short — what a
# change is checked with. `make test-all` is everything: the real servers
# (Redis, PostgreSQL, ZooKeeper, etcd 3.4 and the embedded etcd 3.7 and
# nats-server), the real-time rounds and the long sweeps; CI (.ci/run)
# runs it. Both print each test as it ends (gotestsum, from the module
# proxy at a fixed version: nothing to install), so a long package shows
# its progress instead of one line at its end, and end with a summary of
# what failed. Twice as many packages run at once as there are cores: much
# of the full tier waits on real servers and real time (TTLs, session
# expiries), not on the CPU (measured on 2 cores: 785 s with go test's
# default of one package a core, 529 s with four at once). Parallel tests
# inside a package stay at one a core: four of the command's verify tests
# at once put four 3-member etcd clusters side by side, and one stopped
# answering for 5 s in CI.
TESTP     ?= $(shell echo $$(( 2 * $$(nproc 2>/dev/null || echo 2) )))
GOTESTSUM ?= $(GO) run gotest.tools/gotestsum@v1.13.0
TESTFMT   ?= testname
test:
	@echo "make test: the fast tier (go test -short $(PKGS)): building, then each test as it ends"
	$(GOTESTSUM) --format $(TESTFMT) --hide-summary=skipped -- -short -p $(TESTP) -timeout 30m $(PKGS)

test-all:
	@echo "make test-all: every test (go test $(PKGS)), real servers included: building, then each test as it ends"
	$(GOTESTSUM) --format $(TESTFMT) --hide-summary=skipped -- -p $(TESTP) -timeout 30m $(PKGS)
	$(MAKE) test-clientgo-patched

# vclient/k8slease's release variants on client-go's tryRelease patched:
# the one condition (check that the Lease just read names this elector
# before clearing it) applied at build time to the module cache's file of
# the client-go go.mod names, by the -modfile and -overlay flags
# vclient/k8slease/internal/overlaygen prints (it exits 2, naming the file,
# where that text is not found). An overlay changes the package for the
# whole test binary, so these tests build apart, behind the
# clientgopatched tag; vetted the same way, since the module's own vet and
# staticcheck do not see them. The first build compiles client-go again
# (its directory is a link to the module cache's, which go requires):
# minutes, so make test-all runs them, and make test, the fast tier, not.
test-clientgo-patched:
	flags=$$($(GO) run ./vclient/k8slease/internal/overlaygen) && \
	$(GO) vet -tags clientgopatched $$flags ./vclient/k8slease/ && \
	$(GO) test -tags clientgopatched $$flags -run Patched $(if $(SHORT),-short) -timeout 30m ./vclient/k8slease/

# The examples, a module of their own (examples/go.mod: Go refuses them an
# import of leasecheck's internal/ packages): formatted, vetted,
# staticcheck'd and tested as a user's module would be. They start
# redis-server (skipped without it, failed under CI). RACE=1 runs their
# tests under the race detector (CI does).
test-examples:
	@test -z "$$(gofmt -l examples)" || (gofmt -l examples && exit 1)
	cd examples && $(GO) vet ./...
	cd examples && $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
	cd examples && $(GO) mod tidy -diff
	cd examples && $(GO) test $(if $(RACE),-race) -timeout 30m ./...

# The main job: 1000 seeded scenarios with every fault kind, run against the
# reference implementation in the simulator, every property judged on every
# run; failures shrunk and saved under leasecheck-failures/.
run:
	$(GO) run ./cmd/leasecheck run

# Check a sample history with the checker (exit 0: every property holds).
check:
	$(GO) run ./cmd/leasecheck check checker/testdata/histories/ok-lease-py-transcript.jsonl

# The layer map (docs/design.md §13): each layer, what it may import, each
# package with what it imports (go list -deps), the wrong-way imports known
# today and why. go test ./internal/layers fails on a new one.
layers:
	$(GO) run ./internal/layers/layermap

# The exported names of each package outside internal/ (top-level names and
# the exported methods of exported types, non-test source), the doors marked;
# the deprecated ones (a "Deprecated:" paragraph) listed apart, not counted.
# NAMES=1 lists each package's names too.
exported:
	$(GO) run ./internal/layers/exported $(if $(NAMES),-names)

# The public API against the previous release (.ci/api-baseline: its tag
# and commit, taken from the clone's history): any incompatible change to
# a door fails, but the deletion of a name the release deprecated, listed
# with the release that deprecated it in .ci/api-allow (golang.org/x/exp's
# apidiff, pinned, from the module proxy; CHANGELOG.md states the policy).
api-check:
	$(GO) run ./internal/layers/apicheck $(if $(V),-v)

vet:
	$(GO) vet $(PKGS)
	@test -z "$$(gofmt -l .)" || (gofmt -l . && exit 1)

fmt:
	gofmt -w .

# Performance targets, each a Go benchmark (see the comments in each
# *bench_test.go file for what it measures and why).
# The checker's rows report each shape's time as a ratio to the
# replay floor measured in the same run (x-floor) and its peak heap; the slow
# ones — the long-key streaming rows (a 10^7-op file is a gigabyte) and plain
# porcupine on the same shapes (10 s each at most) — run once each in
# bench-slow.
bench:
	$(GO) test -run '^$$' -bench . -benchtime 5x ./model/
	$(GO) test -run '^$$' -bench '^Benchmark[^S]' -benchtime 5x ./checker/
	$(MAKE) bench-slow
	$(GO) test -run '^$$' -bench . -cpu 1 ./internal/sim/
	GOGC=800 $(GO) test -run '^$$' -bench '^Benchmark[^W]' -benchtime 1x -cpu 1 ./internal/explore/
	GOGC=800 $(GO) test -run '^$$' -bench '^BenchmarkWorkers$$' -benchtime 1x ./internal/explore/
	$(MAKE) bench-explore
	$(GO) test ./internal/campaign -run '^TestMutantReport$$' -report -count=1 -v
	$(GO) test ./internal/campaign -run '^$$' -bench '^BenchmarkSweepFlat$$' -benchtime 1x
	$(GO) test ./vclient/k8slease -run '^$$' -bench '^BenchmarkElection(Judged)?$$' -benchtime 20x
	$(GO) test ./vclient/k8slease -run '^TestReplayRate$$' -failures 100 -count=1 -v -timeout 30m
	$(MAKE) bench-matrix

# The benchmark matrix of the class (internal/classbench): a row
# per cell — verdict, time as a ratio to the replay floor measured in the
# same run, peak memory — for this tree's checker, each tagged release's
# (built here from its source) and plain porcupine. Tens of minutes: the
# slowest cells run to their 20 s budget.
bench-matrix:
	$(GO) run ./internal/classbench/classmatrix -cells matrix

# The regression check CI runs: the fixed sample of the matrix, each cell
# right, decided where a release decided it, and within 2x (+10 ms) of the
# best release's time in the same run.
# The explorer's distinct states per second on one core, this tree beside
# the tagged releases built from their source in the same run (the
# explorer's floor: 4x v0.3.0's rate on the default plan; v0.7.0 is the release before
# depth-first search became the default). Best of 5: the baseline's own
# rate varies by half between runs on a shared 2-core machine.
bench-explore:
	$(GO) run ./internal/classbench/explorerate -reps 5 -releases v0.3.0,v0.7.0

bench-regress:
	LEASECHECK_REGRESS=1 $(GO) test ./internal/classbench -run 'TestRegression|TestJudge' -count=1 -v

# What the default `explore` plan covered of the explored machines' code
# (internal/impl/holder, internal/impl/memstore): the command's own --coverage, which re-runs
# the plan in a build with Go's coverage and reports the per-package
# percentages, the functions and the lines never run (lines behind a
# planted bug's switch are never reached on the reference).
explore-coverage: build
	rm -rf bin/explore-cover
	bin/leasecheck explore --progress=false --out bin/explore-cover-failures --coverage bin/explore-cover

# Peak memory of a sweep of 10^6 seeds (the target: at most 300 MB, flat in
# the number of seeds); a few CPU-minutes.
bench-memory: build
	/usr/bin/time -v bin/leasecheck run --seeds 1000000 --timeout 0 --save 0 --progress=false --json 2>&1 >/dev/null | grep -E 'Maximum resident|Elapsed|User time'

bench-slow:
	$(GO) test -run '^$$' -bench '^BenchmarkSlow' -benchtime 1x -timeout 60m ./checker/
	$(MAKE) bench-stream

# `leasecheck check` on two 10^6-op one-key files a user streams (exact and
# interval mode, written at each op's return, so the checker's first pass
# gives up and it reads the file three times): time as a ratio to the plain
# replay of the same file and peak RSS, this tree beside releases built from
# their source in the same run.
bench-stream:
	$(GO) run ./internal/classbench/streamrows

# The long cluster sweeps (docs/design.md §12), a few minutes each: the fenced
# backends clean over 20 rounds with every fault, the cluster's included;
# etcd's concurrency.Mutex with a plain Put caught under holder pauses;
# ZooKeeper's lost commits on a lagging follower's leader change told from
# any other loss by ZooKeeper's own log (internal/servers).
soak: build
	bin/leasecheck verify --backend etcd-cluster --seeds 20 --shrink-for 0 --progress=false
	bin/leasecheck verify --backend zookeeper-ensemble --seeds 20 --shrink-for 0 --progress=false
	bin/leasecheck verify --backend etcd-cluster-mutex --faults pause,partition --seeds 20 --shrink-for 30s --save 1 --progress=false; test $$? -eq 1
	LEASECHECK_SOAK=1 $(GO) test ./internal/servers -run '^TestZooKeeperEnsembleLostCommits$$' -count=1 -v -timeout 30m

# Go native fuzzing: every fuzz target of the module (each func FuzzXxx in
# a _test.go file; FUZZ=REGEXP picks some) for FUZZTIME each, starting
# from its committed seed corpus (DIR/testdata/fuzz/FuzzXxx, which go test
# runs on every run too), each new input minimized for at most
# FUZZMINIMIZE (go test's default of 60 s an input left FuzzCheck and
# FuzzReadHistory executing nothing new for most of their minute), and a
# table at the end: each target's executions, executions per second and
# the share of its time in which it executed new inputs. Inputs that fail
# land in DIR/testdata/fuzz/FuzzXxx; `go test ./DIR -run FuzzXxx/NAME`
# replays one.
FUZZMINIMIZE ?= 10x
fuzz:
	$(GO) run ./internal/fuzzing/fuzzall -fuzztime $(FUZZTIME) -minimize $(FUZZMINIMIZE) $(if $(FUZZ),-run '$(FUZZ)')

clean:
	rm -rf bin
