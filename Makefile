# function-inferno. `make help` lists the targets.
#
# Every tool is built from a module pinned in tools/go.mod (crossplane CLI
# v2.2.1, controller-gen v0.20.0) into bin/, once; bin/ is gitignored.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c

BIN           := bin
FUNCTION      := $(BIN)/function-inferno
FAKE_SERVER   := $(BIN)/fake-model-server
CROSSPLANE    := $(BIN)/crossplane
CONTROLLER_GEN := $(BIN)/controller-gen
GO_SOURCES    := $(shell find . -name '*.go' -not -path './test/e2e/*' -not -path './tools/*') go.mod go.sum

# STAGE selects the observed resources `make render` uses: pulling, failed,
# starting, serving or degraded. Empty renders a fresh claim.
STAGE ?=
# XR, COMPOSITION and OBSERVED pick what `make render` renders, e.g.
#   make render XR=examples/canary/xr.yaml OBSERVED=examples/canary/observed/serving.yaml
XR ?= examples/xr.yaml
COMPOSITION ?= apis/composition.yaml
OBSERVED ?=
# REQUIRED passes required resources, e.g. the ModelCache a service names:
#   make render XR=examples/modelcache/service-xr.yaml REQUIRED=examples/modelcache/required/ready.yaml
REQUIRED ?=
# Flags for loadgen in `make bench` and `make bench-codec`, e.g.
# BENCH_FLAGS='-rounds=7 -duration=3s', or BENCH_FLAGS=-memory-limits=16,32,64,0
# to measure every server at each soft memory limit.
BENCH_FLAGS ?=
# Flags for `go test` in `make test`.
TEST_FLAGS ?= -race -count=1

.PHONY: help
help: ## Show this help.
	@grep -hE '^[a-z][a-z0-9-]*:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

.PHONY: tools
tools: $(CROSSPLANE) $(CONTROLLER_GEN) ## Build the pinned crossplane CLI and controller-gen into bin/.

$(CROSSPLANE): tools/go.mod
	@mkdir -p $(BIN)
	@echo "building the crossplane CLI $$(awk '/crossplane\/crossplane\/v2 /{print $$2}' tools/go.mod) (5-10 minutes the first time)"
	cd tools && go build -trimpath -ldflags='-s -w' -o $(abspath $@) github.com/crossplane/crossplane/v2/cmd/crank

$(CONTROLLER_GEN): tools/go.mod
	@mkdir -p $(BIN)
	cd tools && go build -trimpath -ldflags='-s -w' -o $(abspath $@) sigs.k8s.io/controller-tools/cmd/controller-gen

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Regenerate deepcopy code (apis, input, the foreign kinds), the Input CRD, the XRDs, Compositions, Configurations, docs/api and the troubleshooting page's Conditions table.
	$(CONTROLLER_GEN) object paths=./apis/... paths=./input/... paths=./internal/kinds/...
	$(CONTROLLER_GEN) crd:crdVersions=v1 paths=./input/... output:crd:artifacts:config=package/input
	go run ./apis/generate -controller-gen=$(CONTROLLER_GEN) -root=.
	@# docs/troubleshooting.md's Conditions table, from internal/reason/reasons.go.
	go test ./fn -run '^TestTroubleshootingConditions$$' -count=1 -update

.PHONY: build
build: $(FUNCTION) ## Build the function binary.

$(FUNCTION): $(GO_SOURCES)
	@mkdir -p $(BIN)
	CGO_ENABLED=0 go build -trimpath -o $@ .

.PHONY: fake-model-server
fake-model-server: $(FAKE_SERVER) ## Build the fake model server, the `fake` preset's image binary (static).

$(FAKE_SERVER): $(shell find cmd/fake-model-server -name '*.go' -not -name '*_test.go') go.mod go.sum
	@mkdir -p $(BIN)
	CGO_ENABLED=0 go build -trimpath -o $@ ./cmd/fake-model-server

.PHONY: test
test: tools ## Run shellcheck on the pull scripts, vet, the unit, golden and generated-file tests and the crossplane render tests.
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	shellcheck input/v1beta1/scripts/*.sh input/v1beta1/scripts/serve/*.sh tools/e2e/llama/build.sh
	go vet ./...
	CROSSPLANE_CLI=$(abspath $(CROSSPLANE)) CONTROLLER_GEN=$(abspath $(CONTROLLER_GEN)) go test $(TEST_FLAGS) ./...
	@# The e2e module's own packages (images, traffic, the package builder):
	@# their unit tests, without the e2e build tag, need no cluster.
	cd test/e2e && go vet ./... && go test $(TEST_FLAGS) ./...

.PHONY: render
render: $(FUNCTION) $(CROSSPLANE) ## Render examples/xr.yaml with the real crossplane CLI (STAGE=pulling|failed|starting|serving|degraded; XR=, COMPOSITION=, OBSERVED= for others).
	@go run ./test/render/cmd/render -function=$(FUNCTION) -crossplane=$(CROSSPLANE) -stage=$(STAGE) -xr=$(XR) -composition=$(COMPOSITION) -observed=$(OBSERVED) -required=$(REQUIRED)

.PHONY: xpkg
xpkg: $(CROSSPLANE) ## Build the Function package (without Docker) and the two Configuration packages into bin/.
	@mkdir -p $(BIN)/xpkg
	CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o $(BIN)/xpkg/function .
	cd test/e2e && go run ./cmd/runtime-image -binary=$(abspath $(BIN)/xpkg/function) -out=$(abspath $(BIN)/xpkg/runtime.tar)
	$(CROSSPLANE) xpkg build --package-root=package --embed-runtime-image-tarball=$(BIN)/xpkg/runtime.tar -o $(BIN)/function-inferno.xpkg
	@# The Configuration packages: each an XRD and its Composition, depending on the Function.
	@# apis/ holds the claim's; apis/namespaced/ (its own package) the v2 namespaced XR's.
	$(CROSSPLANE) xpkg build --package-root=apis --ignore='rbac.yaml,namespaced/*' -o $(BIN)/configuration-inferno.xpkg
	$(CROSSPLANE) xpkg build --package-root=apis/namespaced -o $(BIN)/configuration-inferno-namespaced.xpkg
	@echo "built $(BIN)/function-inferno.xpkg, $(BIN)/configuration-inferno.xpkg and $(BIN)/configuration-inferno-namespaced.xpkg; push each with: $(CROSSPLANE) xpkg push -f <file> <registry>/<name>:<tag>"

# FAKE_SERVER_IMAGE is the image the `fake` preset names.
FAKE_SERVER_IMAGE ?= ghcr.io/inferno-ai/fake-model-server:v0.1.0

.PHONY: images
images: ## Write the fake model server's image as a tarball (no Docker) to bin/images/; publish with crane push or docker load.
	@mkdir -p $(BIN)/images
	CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o $(BIN)/images/fake-model-server ./cmd/fake-model-server
	cd test/e2e && go run ./cmd/runtime-image -binary=$(abspath $(BIN)/images/fake-model-server) -path=/fake-model-server -port=8080/tcp \
		-tag=$(FAKE_SERVER_IMAGE) -out=$(abspath $(BIN)/images/fake-model-server.tar)
	@echo "wrote $(BIN)/images/fake-model-server.tar ($(FAKE_SERVER_IMAGE)); publish with: cd test/e2e && go run github.com/google/go-containerregistry/cmd/crane push $(abspath $(BIN)/images/fake-model-server.tar) <registry>/fake-model-server:<tag>"

# The peers `make bench` measures function-inferno against, name=module@version:
# other projects' functions, each given a Composition input in
# test/load/peers/<name>.yaml that makes the same desired objects from the
# same request. Each is built once, with `go install` at its pinned version
# (the module's own go.sum pins the rest), into bin/peers/<name>-<version>.
# A peer that cannot be built is left out of the rounds, with a note; a
# binary put at that path by other means is used as it is.
PEERS ?= function-go-templating=github.com/crossplane-contrib/function-go-templating@v0.12.2 \
	function-patch-and-transform=github.com/crossplane-contrib/function-patch-and-transform@v0.10.8

.PHONY: bench
bench: $(FUNCTION) ## Benchmark RunFunction and the codec in-process, then load the gRPC server against the empty and the canned-response floors and the peers (PEERS=) (BENCH_FLAGS= for loadgen, e.g. -rounds=7).
	@mkdir -p $(BIN)/peers
	CGO_ENABLED=0 go build -trimpath -o $(BIN)/inferno-floor ./test/load/floor
	CGO_ENABLED=0 go build -trimpath -o $(BIN)/inferno-canned-floor ./test/load/cannedfloor
	@# GOGC=400 is what the server runs with (main.go --gc-percent).
	GOGC=400 go test ./fn ./internal/structcodec -run '^$$' -bench 'BenchmarkRunFunction|BenchmarkWire|BenchmarkDecode' -benchmem -count 1 | tee $(BIN)/bench.txt
	@peers=(); for p in $(PEERS); do \
	  name=$${p%%=*}; mod=$${p#*=}; bin=$(BIN)/peers/$$name-$${mod##*@}; \
	  if [ ! -x $$bin ]; then \
	    echo "building peer $$mod into $$bin"; \
	    GOBIN=$(abspath $(BIN)/peers/.build) CGO_ENABLED=0 go install -trimpath $$mod && mv $(BIN)/peers/.build/$$name $$bin \
	      || echo "peer $$name left out: cannot build $$mod"; \
	  fi; \
	  if [ -x $$bin ]; then peers+=("-peer=$$name=$$bin"); fi; \
	done; \
	set -x; go run ./test/load/cmd/loadgen -function=$(FUNCTION) -floor=$(BIN)/inferno-floor -canned-floor=$(BIN)/inferno-canned-floor -bench=$(BIN)/bench.txt "$${peers[@]}" $(BENCH_FLAGS)

# The decoder's worth: function-inferno built with the standard path
# (structpb.AsMap and the apimachinery converter) in internal/structcodec's
# place, measured in the same rounds as the real build, which it must
# answer byte for byte. (The encoder this once measured is gone: it bought
# 10-14%, short of the 15% that would have kept it; docs/performance.md.)
STANDARD_PATHS := github.com/inferno-ai/function-inferno/internal/structcodec.standardPaths

.PHONY: bench-codec
bench-codec: $(FUNCTION) ## Measure what the struct decoder buys: function-inferno against itself built with the standard path for decoding.
	@mkdir -p $(BIN)
	CGO_ENABLED=0 go build -trimpath -o $(BIN)/inferno-floor ./test/load/floor
	CGO_ENABLED=0 go build -trimpath -o $(BIN)/inferno-canned-floor ./test/load/cannedfloor
	CGO_ENABLED=0 go build -trimpath -ldflags=-X=$(STANDARD_PATHS)=decode -o $(BIN)/function-inferno-standard-decode .
	go run ./test/load/cmd/loadgen -function=$(FUNCTION) -floor=$(BIN)/inferno-floor -canned-floor=$(BIN)/inferno-canned-floor \
		-compare='standard decode=$(BIN)/function-inferno-standard-decode' $(BENCH_FLAGS)

.PHONY: golden
golden: ## Rewrite the golden files and examples/observed after an intended change.
	go test ./fn -run 'Golden' -update

.PHONY: clean
clean: ## Remove built binaries (the pinned tools too).
	rm -rf $(BIN)

-include test/e2e/e2e.mk
