# Steward. `make help` lists the targets; docs/development.md explains them.

# Build with the installed Go only: no toolchain downloads, here or in CI.
export GOTOOLCHAIN := local

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

BIN := $(abspath bin)
# Directory of kube-apiserver and etcd for envtest (and `steward up`).
KUBEBUILDER_ASSETS := $(BIN)/k8s
CONTROLLER_GEN := $(BIN)/controller-gen

# Extra flags: make test GO_TEST_FLAGS='-run TestStateKeep -v'
GO_TEST_FLAGS ?=
TEST_TIMEOUT ?= 20m
# Extra flags for `steward up` or `steward controller`: make run ARGS='--help'
ARGS ?=

.PHONY: help
help: ## List targets
	@awk 'BEGIN {FS = ":.*## "} /^##@/ {printf "\n%s\n", substr($$0, 5)} \
		/^[a-z-]+:.*## / {printf "  %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

##@ Development

.PHONY: run
run: build ## Run Steward: on an embedded local control plane, or on $KUBECONFIG when set
	@if [[ -n "$${KUBECONFIG:-}" ]]; then \
		echo "KUBECONFIG is set: running the controller against $$KUBECONFIG"; \
		exec bin/steward controller $(ARGS); \
	else \
		hack/install-tools.sh etcd kube-apiserver; \
		exec bin/steward up $(ARGS); \
	fi

.PHONY: build
build: ## Build bin/steward
	go build -o bin/steward ./cmd/steward

.PHONY: test
test: tools ## Run all tests, envtest ones against bin/k8s, then fuzz each target for a few seconds
	KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) go test -count=1 -timeout $(TEST_TIMEOUT) $(GO_TEST_FLAGS) ./...
	@if [[ -z "$(GO_TEST_FLAGS)" ]]; then $(MAKE) --no-print-directory fuzz-short; fi

# Fuzz targets, as <package>:<FuzzName>. go test fuzzes one target of one
# package per run, so `make fuzz` runs them in turn; their seed corpora
# (testdata/fuzz/<FuzzName>/ in each package) run as ordinary tests in
# `go test ./...`.
FUZZ_TARGETS := \
	./internal/controller:FuzzReconcileInterval \
	./internal/render:FuzzRender_Properties \
	./internal/render:FuzzRender_Template \
	./internal/tracker:FuzzDecode \
	./internal/tracker:FuzzEncodeDecode \
	./internal/tracker:FuzzName_PublishVersion \
	./internal/cluster:FuzzCredentialsFromSecret
# Fuzzing time per target: make fuzz FUZZTIME=10m. FUZZ_TIMEOUT bounds each
# go test run (0: none). Extra flags: FUZZ_FLAGS=-parallel=1
FUZZTIME ?= 1m
FUZZ_TIMEOUT ?= 0
FUZZ_FLAGS ?=

.PHONY: fuzz fuzz-short
fuzz: ## Fuzz every target of FUZZ_TARGETS for FUZZTIME (1m) each; failing inputs are written to testdata/fuzz/
fuzz-short: FUZZTIME = 3s
fuzz-short: FUZZ_TIMEOUT = 5m
fuzz-short: ## The same for 3 s per target
fuzz fuzz-short:
	@failed=""; \
	for target in $(FUZZ_TARGETS); do \
		pkg="$${target%%:*}"; name="$${target##*:}"; \
		echo "Fuzzing $$name in $$pkg for $(FUZZTIME)"; \
		KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) go test -run '^$$' -fuzz "^$$name\$$" \
			-fuzztime $(FUZZTIME) -timeout $(FUZZ_TIMEOUT) $(FUZZ_FLAGS) "$$pkg" || failed="$$failed $$name"; \
	done; \
	if [[ -n "$$failed" ]]; then echo "Fuzz targets that failed:$$failed"; exit 1; fi

# Chaos run length and seed: make chaos CHAOS_ITERATIONS=500 CHAOS_SEED=1234
CHAOS_ITERATIONS ?= 200
CHAOS_SEED ?=
# CHAOS_DRIFT_DETECTION=watch runs the controller in watch mode.
CHAOS_DRIFT_DETECTION ?=

.PHONY: chaos
chaos: tools ## Long chaos run: CHAOS_ITERATIONS (200) iterations; replay a failure with CHAOS_SEED
	KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) CHAOS_ITERATIONS=$(CHAOS_ITERATIONS) CHAOS_SEED=$(CHAOS_SEED) CHAOS_DRIFT_DETECTION=$(CHAOS_DRIFT_DETECTION) \
		go test -count=1 -timeout 3h -run '^TestChaos$$' -v ./test/chaos/

.PHONY: bench
bench: tools build ## Benchmark Steward against the .Owns() baseline (~40 min with the soak); regenerates docs/benchmarks.md
	go build -o bin/owns ./bench/baseline/owns
	go build -o bin/stewardbench ./bench/cmd/stewardbench
	KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) bin/stewardbench --profile full $(BENCH_ARGS)

.PHONY: bench-quick
bench-quick: tools build ## The same benchmarks at small sizes (under 10 min)
	go build -o bin/owns ./bench/baseline/owns
	go build -o bin/stewardbench ./bench/cmd/stewardbench
	KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) bin/stewardbench --profile quick $(BENCH_ARGS)

.PHONY: bench-soak
bench-soak: tools build ## The soak alone: 100 apps re-syncing every 10 s for 10 min per controller (~25 min); keeps the other results
	go build -o bin/owns ./bench/baseline/owns
	go build -o bin/stewardbench ./bench/cmd/stewardbench
	KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) bin/stewardbench --profile full --scenarios soak --merge $(BENCH_ARGS)

##@ Generated code

.PHONY: generate
generate: controller-gen ## Generate DeepCopy methods in api/
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...

.PHONY: manifests
manifests: controller-gen ## Generate CRDs into config/crd and RBAC into config/rbac
	$(CONTROLLER_GEN) crd rbac:roleName=steward-manager paths=./... \
		output:crd:artifacts:config=config/crd output:rbac:artifacts:config=config/rbac
	hack/sync-chart.sh

##@ Checks

.PHONY: verify
verify: generate manifests lint ## Fail if generated files are stale or code is unformatted
	@if ! git diff --quiet -- api config/crd config/rbac charts || \
		[[ -n "$$(git ls-files --others --exclude-standard -- api config/crd config/rbac charts)" ]]; then \
		git status --short -- api config/crd config/rbac charts; \
		echo "Generated files are stale: run 'make generate manifests' and commit the result"; \
		exit 1; \
	fi
	@unformatted="$$(find . -name '*.go' -not -path './bin/*' -not -path './.git/*' -not -path '*/testdata/*' | xargs gofmt -l)"; \
	if [[ -n "$$unformatted" ]]; then \
		echo "Not gofmt-ed (run 'gofmt -w' on them):"; echo "$$unformatted"; exit 1; \
	fi

.PHONY: lint
lint: ## Run go vet
	go vet ./...

##@ Tools

.PHONY: tools
tools: ## Build kube-apiserver, etcd, controller-gen and helm into bin/ (cold: ~10 min)
	hack/install-tools.sh
	hack/install-helm.sh

.PHONY: controller-gen
controller-gen:
	@hack/install-tools.sh controller-gen
