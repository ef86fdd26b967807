# leasecheck — see README.md.
GO       ?= go
FUZZTIME ?= 60s
PKGS     := ./...

.PHONY: all build test check run bench fuzz fuzz-history vet fmt clean

all: vet test

build:
	$(GO) build -o bin/leasecheck ./cmd/leasecheck

# The tests: unit, golden, property (rapid) and CLI tests.
test:
	$(GO) test $(PKGS)

# Check a sample history with the checker (exit 0: every property holds).
check:
	$(GO) run ./cmd/leasecheck check testdata/histories/ok-lease-py-transcript.jsonl

vet:
	$(GO) vet $(PKGS)
	@test -z "$$(gofmt -l .)" || (gofmt -l . && exit 1)

fmt:
	gofmt -w .

# Performance targets, each a Go benchmark (see the comments in each
# *bench_test.go file for what it measures and why).
bench:
	$(GO) test -run '^$$' -bench . -benchtime 5x ./model/ ./checker/

# Go native fuzzing, FUZZTIME per target.
fuzz: fuzz-history

fuzz-history:
	$(GO) test -run '^$$' -fuzz '^FuzzReadHistory$$' -fuzztime $(FUZZTIME) ./model/

clean:
	rm -rf bin
