# Steward. `make help` lists the targets; docs/development.md explains them.

# Build with the installed Go only: no toolchain downloads, here or in CI.
export GOTOOLCHAIN := local

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

BIN := $(abspath bin)
# Directory of kube-apiserver and etcd for envtest, and of the whole local
# control plane of `steward dev` (plus kube-controller-manager, kube-scheduler, kwok).
KUBEBUILDER_ASSETS := $(BIN)/k8s
CONTROLLER_GEN := $(BIN)/controller-gen

# Extra flags: make test GO_TEST_FLAGS='-run TestStateKeep -v'
GO_TEST_FLAGS ?=
TEST_TIMEOUT ?= 20m
# Extra flags for `steward dev` or `steward controller`: make run ARGS='--help'
ARGS ?=

.PHONY: help
help: ## List targets
	@awk 'BEGIN {FS = ":.*## "} /^##@/ {printf "\n%s\n", substr($$0, 5)} \
		/^[a-z-]+:.*## / {printf "  %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

##@ Development

.PHONY: run
run: build ## Run Steward: on a local control plane where apps become healthy (steward dev), or on $KUBECONFIG when set
	@if [[ -n "$${KUBECONFIG:-}" ]]; then \
		echo "KUBECONFIG is set: running the controller against $$KUBECONFIG"; \
		exec bin/steward controller $(ARGS); \
	else \
		hack/install-tools.sh etcd kube-apiserver kube-controller-manager kube-scheduler kwok; \
		exec bin/steward dev $(ARGS); \
	fi

.PHONY: build
build: ## Build bin/steward, stamped with git describe and the commit (steward version)
	@version="$$(git describe --tags --always --dirty 2>/dev/null || true)"; \
	commit="$$(git rev-parse HEAD 2>/dev/null || true)"; \
	pkg=github.com/steward-oam/steward/internal/version; \
	echo "go build -o bin/steward ./cmd/steward (version $${version:-from build info})"; \
	go build -ldflags "-X $$pkg.version=$$version -X $$pkg.commit=$$commit" -o bin/steward ./cmd/steward

.PHONY: test
test: tools ## Run all tests, envtest ones against bin/k8s, then fuzz each target for a few seconds
	KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) go test -count=1 -timeout $(TEST_TIMEOUT) $(GO_TEST_FLAGS) ./...
	KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) go -C bench test -count=1 -timeout $(TEST_TIMEOUT) $(GO_TEST_FLAGS) ./...
	@if [[ -z "$(GO_TEST_FLAGS)" ]]; then $(MAKE) --no-print-directory fuzz-short; fi

.PHONY: test-vela
test-vela: ## Drive KubeVela's own CLI (bin/vela, built from source: cold 20+ min) against Steward on the local plane (test/vela; not part of make test)
	hack/install-tools.sh etcd kube-apiserver kube-controller-manager kube-scheduler kwok
	hack/install-vela.sh
	VELA_BIN=$(BIN)/vela KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) go test -count=1 -timeout 30m -v $(GO_TEST_FLAGS) ./test/vela/

# Fuzz targets, as <package>:<FuzzName>. go test fuzzes one target of one
# package per run, so `make fuzz` runs them in turn; their seed corpora
# (testdata/fuzz/<FuzzName>/ in each package) run as ordinary tests in
# `go test ./...`.
FUZZ_TARGETS := \
	./internal/controller/application/wake:FuzzReconcileInterval \
	./internal/render:FuzzRender_Properties \
	./internal/render:FuzzRender_Template \
	./internal/tracker:FuzzDecode \
	./internal/tracker:FuzzEncodeDecode \
	./internal/tracker:FuzzName_PublishVersion \
	./internal/cluster:FuzzCredentialsFromSecret \
	./internal/sandbox:FuzzReadFrame \
	./internal/provider:FuzzJSONStringLen \
	./internal/provider:FuzzConfigReferences \
	./internal/egress:FuzzParseRule \
	./internal/egress:FuzzDecide
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
# CHAOS_DRIFT_DETECTION=timer runs the controller in timer mode (default: its default, watch).
CHAOS_DRIFT_DETECTION ?=

.PHONY: chaos
chaos: tools ## Long chaos run: CHAOS_ITERATIONS (200) iterations; replay a failure with CHAOS_SEED
	KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) CHAOS_ITERATIONS=$(CHAOS_ITERATIONS) CHAOS_SEED=$(CHAOS_SEED) CHAOS_DRIFT_DETECTION=$(CHAOS_DRIFT_DETECTION) \
		go test -count=1 -timeout 3h -run '^TestChaos$$' -v ./test/chaos/

# The benchmarks are their own Go module (bench/go.mod), so gonum/plot and
# its fonts stay out of the controller's go.mod.
.PHONY: bench-binaries
bench-binaries:
	go -C bench build -o $(BIN)/owns ./baseline/owns
	go -C bench build -o $(BIN)/stewardbench ./cmd/stewardbench

.PHONY: bench
bench: tools build bench-binaries ## Benchmark Steward against the .Owns() baseline (~40 min with the soak); regenerates docs/benchmarks.md
	KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) bin/stewardbench --profile full $(BENCH_ARGS)

.PHONY: bench-quick
bench-quick: tools build bench-binaries ## The same benchmarks at small sizes (under 10 min)
	KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) bin/stewardbench --profile quick $(BENCH_ARGS)

.PHONY: bench-scale
# Steward's command line in the scale and shards scenarios, in each mode.
BENCH_STEWARD = bin/steward controller --metrics-addr={metrics-addr} --pprof-addr={pprof-addr} --health-addr=0 --kube-api-qps={qps} --kube-api-burst={burst} --egress-allow=127.0.0.1/32

.PHONY: bench-scale
bench-scale: tools build bench-binaries ## How far one controller goes, in watch and timer mode: 10,000 apps of 8 objects: CPU to converge, steady cores at the default re-sync, 100 hand changes timed to repair, then a restarted full pass (issues 15 and 35; not part of make bench; ~60 min); keeps the other results
	KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) bin/stewardbench --profile full --scenarios scale --merge \
		--controller "steward-watch=$(BENCH_STEWARD) --drift-detection=watch" --controller "steward=$(BENCH_STEWARD) --drift-detection=timer" $(BENCH_ARGS)

.PHONY: bench-helm
bench-helm: tools build bench-binaries ## 100 Applications of one Helm chart from a loopback repository: convergence against the QPS bound, downloads, cache hits, heap (issue 32; not part of make bench); keeps the other results
	KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) bin/stewardbench --profile full --scenarios helm --merge $(BENCH_ARGS)

.PHONY: bench-definitions
bench-definitions: tools build bench-binaries ## Definition changes under autoUpdate (2,000 apps, 50 autoUpdate, 5 changes: latency, requests, revisions, heap) and admission latency of a valid Application (issue 33; not part of make bench); keeps the other results
	KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) bin/stewardbench --profile full --scenarios definitions --merge $(BENCH_ARGS)

.PHONY: bench-shards
bench-shards: tools build bench-binaries ## One controller against three shards of it: 10,000 apps of 8 objects at QPS 400 / burst 600, heap, steady cores per replica, time to Ready and drift repair (issues 15 and 35; not part of make bench; ~45 min); keeps the other results
	KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) bin/stewardbench --profile full --scenarios shards --merge --qps 400 --burst 600 --controller "steward-watch=$(BENCH_STEWARD) --drift-detection=watch" $(BENCH_ARGS)

.PHONY: bench-dashboard
bench-dashboard: tools ## The dashboard's list page over 10,000 Applications: server time per page and heap (issue 34; not part of make bench; ~3 min)
	KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) go test ./test/dashboard -run '^$$' -bench Dashboard -benchtime 20x -count 1 -timeout 30m $(BENCH_ARGS)

.PHONY: bench-reconcile
bench-reconcile: tools ## One steady re-sync pass of the soak's Application, in watch and timer mode, on a real API server: CPU, bytes and allocations per pass (issue 49; not part of make bench; ~2 min)
	KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) go test ./internal/controller/application -run '^$$' -bench SteadyPass -benchtime 2000x -count 1 -timeout 30m $(BENCH_ARGS)

.PHONY: bench-soak
bench-soak: tools build bench-binaries ## The soak alone: 100 apps re-syncing every 10 s for 10 min per controller (~25 min); keeps the other results
	KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) bin/stewardbench --profile full --scenarios soak --merge $(BENCH_ARGS)

##@ Image

# The image `make image` builds and the chart installs by default:
# IMAGE_REPO:<the chart's appVersion>.
IMAGE_REPO ?= ghcr.io/steward-oam/steward
IMAGE_TAG ?= $(shell awk -F'"' '/^appVersion:/ { print $$2 }' charts/steward/Chart.yaml)
IMAGE_ARCH ?= $(shell go env GOARCH)
IMAGE_OUT ?= bin/steward-image.tar

# The binary is static (an empty base has no libc) and stamped as `make
# build` stamps bin/steward; the image's labels carry the tag and the commit.
.PHONY: image
image: ## Build bin/steward-image.tar, the controller image, without Docker: docker load -i / kind load image-archive it
	@[[ -n "$(IMAGE_TAG)" ]] || { echo "no appVersion in charts/steward/Chart.yaml" >&2; exit 1; }
	@version="$$(git describe --tags --always --dirty 2>/dev/null || true)"; \
	commit="$$(git rev-parse HEAD 2>/dev/null || true)"; \
	created="$${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct 2>/dev/null || echo 0)}"; \
	pkg=github.com/steward-oam/steward/internal/version; \
	echo "building bin/image/steward for linux/$(IMAGE_ARCH) (version $${version:-from build info})"; \
	CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) go build -trimpath \
		-ldflags "-s -w -X $$pkg.version=$$version -X $$pkg.commit=$$commit" -o bin/image/steward ./cmd/steward; \
	go -C hack/tools/image build -o $(BIN)/image-builder .; \
	$(BIN)/image-builder --binary bin/image/steward --arch $(IMAGE_ARCH) --tag $(IMAGE_REPO):$(IMAGE_TAG) \
		--version $(IMAGE_TAG) --revision "$$commit" --created "$$created" --out $(IMAGE_OUT)

##@ Generated code

.PHONY: generate
generate: controller-gen ## Generate DeepCopy methods in api/
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...

.PHONY: manifests
manifests: controller-gen ## Generate CRDs into config/crd and RBAC into config/rbac
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true rbac:roleName=steward-manager paths=./... \
		output:crd:artifacts:config=config/crd output:rbac:artifacts:config=config/rbac
	hack/sync-chart.sh

##@ Checks

.PHONY: verify
verify: generate manifests lint check-binaries ## Fail if generated files are stale, code is unformatted, a package lacks its doc.go map, or git tracks a binary
	@if ! git diff --quiet -- api config/crd config/rbac charts || \
		[[ -n "$$(git ls-files --others --exclude-standard -- api config/crd config/rbac charts)" ]]; then \
		git status --short -- api config/crd config/rbac charts; \
		echo "Generated files are stale: run 'make generate manifests' and commit the result"; \
		exit 1; \
	fi
	@if ! go -C bench mod tidy -diff >/dev/null; then \
		echo "bench/go.mod or bench/go.sum is not tidy (after a change to go.mod, too): run 'go -C bench mod tidy'"; \
		exit 1; \
	fi
	@unformatted="$$(find . -name '*.go' -not -path './bin/*' -not -path './.git/*' -not -path '*/testdata/*' | xargs gofmt -l)"; \
	if [[ -n "$$unformatted" ]]; then \
		echo "Not gofmt-ed (run 'gofmt -w' on them):"; echo "$$unformatted"; exit 1; \
	fi

.PHONY: lint
lint: check-docmap check-structure ## Run go vet (here, in the bench module and in hack/tools/image), check every package's doc.go and the size limits
	go vet ./...
	go -C bench vet ./...
	go -C hack/tools/image vet ./...

.PHONY: check-docmap
check-docmap: ## Fail if a Go package has no doc.go, or its doc.go does not name each of its files
	hack/check-docmap.sh

.PHONY: check-structure
check-structure: ## Fail if a product file is over 600 lines, or a package over 25 product files or 5,000 lines
	hack/check-structure.sh

.PHONY: check-binaries
check-binaries: ## Fail if git tracks a built binary (ELF, Mach-O, PE, wasm) or a file over 5 MB
	hack/check-no-binaries.sh

##@ Tools

.PHONY: tools
tools: ## Build the control plane binaries (kube-apiserver, etcd, kube-controller-manager, kube-scheduler, kwok), controller-gen and helm into bin/ (cold: ~15 min)
	hack/install-tools.sh
	hack/install-helm.sh

.PHONY: controller-gen
controller-gen:
	@hack/install-tools.sh controller-gen
