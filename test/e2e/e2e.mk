# End-to-end test: a real control plane on 127.0.0.1 (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kwok, Crossplane core) with the
# function installed as a Crossplane package from a local OCI registry.
#
# Included from the top-level Makefile; every path is relative to the repo
# root. Each tool is built once from its pinned tools module under
# tools/e2e/<name> into bin/ (gitignored) and rebuilt only when that module's
# go.mod changes, i.e. when a version is bumped.
#
#   make e2e-tools   build the control-plane binaries
#   make e2e         build them if missing, then run the test
#
# Measured on the 2-core dev machine, 2026-12-03, with empty module and
# build caches (downloads included): crossplane CLI and controller-gen,
# then etcd 64 s, the five Kubernetes binaries in one build 452 s,
# local-path-provisioner 154 s (beside it), kwok and crossplane core:
# 19 minutes in all. A warm `make e2e` takes 6 minutes (12 with
# Crossplane's default circuit-breaker burst, see docs/testing.md).
#
# E2E_FLAGS passes flags to the test binary, e.g.
#   make e2e E2E_FLAGS='-stress=200 -keep'
# E2E_RUN selects scenarios by Go test regexp (-run).

E2E_BIN_DIR  ?= bin
E2E_GO_BUILD ?= nice -n 19 go build -trimpath
# No symbol table or DWARF: the test never debugs the control plane, and
# linking the debug info of kube-apiserver-sized binaries is minutes of a
# cold build.
E2E_LDFLAGS  ?= -s -w
E2E_TIMEOUT  ?= 40m
E2E_FLAGS    ?=
# Crossplane runs with its defaults, as a platform installs it from its
# Helm chart: since the function polls while Crossplane's circuit breaker
# cuts a composite's watch (input.poll, docs/performance.md), no flag needs
# tuning. E2E_CROSSPLANE_ARGS passes Crossplane flags for a run that
# measures them, e.g. E2E_CROSSPLANE_ARGS=--circuit-breaker-burst=400.
E2E_CROSSPLANE_ARGS ?=
E2E_RUN      ?= .

E2E_ETCD       := $(E2E_BIN_DIR)/etcd
E2E_APISERVER  := $(E2E_BIN_DIR)/kube-apiserver
E2E_KCM        := $(E2E_BIN_DIR)/kube-controller-manager
E2E_SCHEDULER  := $(E2E_BIN_DIR)/kube-scheduler
E2E_KUBELET    := $(E2E_BIN_DIR)/kubelet
E2E_KUBE_PROXY := $(E2E_BIN_DIR)/kube-proxy
E2E_KWOK       := $(E2E_BIN_DIR)/kwok
E2E_LOCAL_PATH := $(E2E_BIN_DIR)/local-path-provisioner
E2E_XP_CORE    := $(E2E_BIN_DIR)/crossplane-core
E2E_EPP        := $(E2E_BIN_DIR)/epp
E2E_LWS        := $(E2E_BIN_DIR)/lws-controller
E2E_KEDA       := $(E2E_BIN_DIR)/keda-operator
E2E_KUBE_ROUTER := $(E2E_BIN_DIR)/kube-router
# Kubernetes' own DRA test driver (test/e2e/dra/test-driver), a kubelet
# plugin publishing fake devices for the DRA scenarios (38-dra-*).
E2E_DRA_DRIVER := $(E2E_BIN_DIR)/dra-test-driver
E2E_PROVIDER_KUBERNETES := $(E2E_BIN_DIR)/provider-kubernetes
# KEDA's HTTP add-on: its interceptor, external scaler and operator, in a
# directory of their own (their package names are too generic for bin/).
E2E_HTTP_ADDON_DIR := $(E2E_BIN_DIR)/keda-http-add-on
E2E_HTTP_ADDON := $(E2E_HTTP_ADDON_DIR)/interceptor $(E2E_HTTP_ADDON_DIR)/scaler $(E2E_HTTP_ADDON_DIR)/operator
# llama.cpp's llama-server and its shared libraries, in a directory of
# their own (the libraries must sit beside the executable).
E2E_LLAMA      := $(E2E_BIN_DIR)/llama/llama-server
# Ollama's server (one binary, its own model runner).
E2E_OLLAMA     := $(E2E_BIN_DIR)/ollama/ollama
# The crossplane CLI (v2.2.1, for `xpkg build`/`xpkg push`) is pinned and
# built by the top-level tools module, not here.
E2E_XP_CLI     := $(E2E_BIN_DIR)/crossplane

E2E_TOOLS := $(E2E_ETCD) $(E2E_APISERVER) $(E2E_KCM) $(E2E_SCHEDULER) $(E2E_KUBELET) $(E2E_KUBE_PROXY) $(E2E_KWOK) $(E2E_LOCAL_PATH) $(E2E_XP_CORE) $(E2E_EPP) $(E2E_LWS) $(E2E_KEDA) $(E2E_HTTP_ADDON) $(E2E_KUBE_ROUTER) $(E2E_LLAMA) $(E2E_OLLAMA) $(E2E_PROVIDER_KUBERNETES) $(E2E_DRA_DRIVER)

.PHONY: e2e-tools e2e

e2e-tools: $(E2E_TOOLS)

# Each recipe prints its own wall time so cold build times can be read off a
# fresh CI log. Builds are niced: they take minutes on two cores.
# e2e_module_version is the version tools module $(2) requires of module
# $(1): the word after the module's path in its go.mod, in a require block
# or on a require line. Release builds stamp it into the binaries.
e2e_module_version = $(shell awk '{for (i = 1; i < NF; i++) if ($$i == "$(1)") {print $$(i+1); exit}}' $(2)/go.mod)

define e2e_build_tool
	@mkdir -p $(E2E_BIN_DIR)
	@echo "e2e-tools: building $@ from $(1)"
	@start=$$(date +%s); \
	cd $(2) && $(E2E_GO_BUILD) -ldflags='$(E2E_LDFLAGS) $(3)' -o $(abspath $@) $(1) || exit 1; \
	echo "e2e-tools: built $@ in $$(( $$(date +%s) - start ))s"
endef

$(E2E_ETCD): tools/e2e/etcd/go.mod
	$(call e2e_build_tool,go.etcd.io/etcd/server/v3,tools/e2e/etcd)

# The five Kubernetes binaries (the control plane's three, and kubelet and
# kube-proxy for the real node) come from one `go build`: their packages
# are mostly shared, and one build graph compiles each once and keeps both
# cores busy where five builds in a row would each wait on its own link.
$(E2E_APISERVER) $(E2E_KCM) $(E2E_SCHEDULER) $(E2E_KUBELET) $(E2E_KUBE_PROXY) &: tools/e2e/kube/go.mod
	@mkdir -p $(E2E_BIN_DIR)
	@echo "e2e-tools: building kube-apiserver, kube-controller-manager, kube-scheduler, kubelet and kube-proxy from k8s.io/kubernetes"
	@start=$$(date +%s); \
	cd tools/e2e/kube && $(E2E_GO_BUILD) -ldflags='$(E2E_LDFLAGS)' -o $(abspath $(E2E_BIN_DIR))/ \
		k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler \
		k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy || exit 1; \
	echo "e2e-tools: built kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy in $$(( $$(date +%s) - start ))s"

# The DRA test driver, from the same module and build cache as the five:
# built after them it compiles little of its own (measured cold, empty
# build cache, modules downloaded, load 6 on 2 cores: 423 s alone; 247 s
# on a build cache of the e2e tools; 10 s on 2026-12-08 right after a cold
# e2e-tools, whose kubelet build left what it shares in the cache).
$(E2E_DRA_DRIVER): tools/e2e/kube/go.mod | $(E2E_KUBELET)
	$(call e2e_build_tool,k8s.io/kubernetes/test/e2e/dra/test-driver,tools/e2e/kube)

$(E2E_KWOK): tools/e2e/kwok/go.mod
	$(call e2e_build_tool,sigs.k8s.io/kwok/cmd/kwok,tools/e2e/kwok)

# The volume provisioner of the real node: Rancher's local-path-provisioner,
# as kind ships it, run out of cluster with the test's kubeconfig. A `tool`
# directive pins it (its root package is a main package, which tools.go
# cannot import).
$(E2E_LOCAL_PATH): tools/e2e/localpath/go.mod
	$(call e2e_build_tool,github.com/rancher/local-path-provisioner,tools/e2e/localpath)

# The Gateway API Inference Extension's endpoint picker, which scenario 31
# runs on the host against a claim's InferencePool (a tool directive pins
# it, as local-path-provisioner).
$(E2E_EPP): tools/e2e/epp/go.mod
	$(call e2e_build_tool,sigs.k8s.io/gateway-api-inference-extension/cmd/epp,tools/e2e/epp)

# The LeaderWorkerSet controller (sigs.k8s.io/lws, the module's cmd
# package), which scenario 28 runs on the host with its webhooks served to
# the API server on 127.0.0.1: 77 s cold here (2026-12-04).
$(E2E_LWS): tools/e2e/lws/go.mod
	$(call e2e_build_tool,sigs.k8s.io/lws/cmd,tools/e2e/lws)

# KEDA's operator (github.com/kedacore/keda/v2 v2.17.0, cmd/operator, a
# tool directive as epp), which scenario 26 runs on the host against the
# claim's ScaledObject and a fake Prometheus on 127.0.0.1: it scales the
# Deployment between 0 and 1 itself, through the scale subresource, so no
# metrics API server runs. v2.17.0 because later KEDA needs a newer Go.
# The version is stamped as KEDA's release build does (it labels the HPAs
# it creates app.kubernetes.io/version, "main" without it).
E2E_KEDA_VERSION = $(call e2e_module_version,github.com/kedacore/keda/v2,tools/e2e/keda)

$(E2E_KEDA): tools/e2e/keda/go.mod
	$(call e2e_build_tool,github.com/kedacore/keda/v2/cmd/operator,tools/e2e/keda,-X=github.com/kedacore/keda/v2/version.Version=$(E2E_KEDA_VERSION))

# KEDA's HTTP add-on (github.com/kedacore/http-add-on v0.12.0, the only
# version the module proxy serves here; tool directives as epp), which
# scenario 26c runs on the host beside KEDA's operator: a request held by
# its interceptor wakes a llama.cpp claim at zero. One `go build` of the
# three, as for the Kubernetes binaries: they share most packages: 14 min
# 56 s cold here beside a cold build of everything else, 9 s warm (the
# links), 2026-12-06. The version is stamped as the add-on's Makefile does
# (its components log it).
E2E_HTTP_ADDON_VERSION = $(call e2e_module_version,github.com/kedacore/http-add-on,tools/e2e/httpaddon)

$(E2E_HTTP_ADDON) &: tools/e2e/httpaddon/go.mod
	@mkdir -p $(E2E_HTTP_ADDON_DIR)
	@echo "e2e-tools: building KEDA's HTTP add-on (interceptor, scaler, operator) from github.com/kedacore/http-add-on"
	@start=$$(date +%s); \
	cd tools/e2e/httpaddon && $(E2E_GO_BUILD) -ldflags='$(E2E_LDFLAGS) -X=github.com/kedacore/http-add-on/pkg/build.version=$(E2E_HTTP_ADDON_VERSION)' \
		-o $(abspath $(E2E_HTTP_ADDON_DIR))/ github.com/kedacore/http-add-on/interceptor github.com/kedacore/http-add-on/scaler github.com/kedacore/http-add-on/operator || exit 1; \
	echo "e2e-tools: built KEDA's HTTP add-on in $$(( $$(date +%s) - start ))s"

# Crossplane's release build stamps its version into crossplane-runtime;
# without it the core reports version "" and refuses every package that
# declares spec.crossplane.version ("invalid semantic version").
E2E_XP_VERSION = $(call e2e_module_version,github.com/crossplane/crossplane/v2,tools/e2e/crossplane)

$(E2E_XP_CORE): tools/e2e/crossplane/go.mod
	$(call e2e_build_tool,github.com/crossplane/crossplane/v2/cmd/crossplane,tools/e2e/crossplane,-X=github.com/crossplane/crossplane-runtime/v2/pkg/version.version=$(E2E_XP_VERSION))

# The test builds the function itself (static, CGO_ENABLED=0) because the
# binary goes into the package's runtime image. -function=real: a green run
# can never mean the real function was skipped for the stand-in. It finds the tools through
# E2E_BIN_DIR and the repo through E2E_REPO_ROOT.
e2e: $(E2E_TOOLS) $(E2E_XP_CLI)
	cd test/e2e && E2E_BIN_DIR=$(abspath $(E2E_BIN_DIR)) E2E_REPO_ROOT=$(abspath .) \
		go test -tags e2e -count=1 -timeout $(E2E_TIMEOUT) -run '$(E2E_RUN)' -v . -args -function=real -crossplane-args='$(E2E_CROSSPLANE_ARGS)' $(E2E_FLAGS)

# `make scale N=200` drives N claims at once through the control plane of
# `make e2e` and prints what they cost the chain (see scale_test.go). Not
# part of CI. SCALE_FLAGS passes more test flags, e.g. -scale-steady=5m or
# -crossplane-args=--circuit-breaker-burst=400. PEER= names a directory
# holding function-go-templating's source (v0.12.2, the release
# test/load/peers/ was written for: the module proxy refuses the module,
# so it comes from the release's source tree, unpacked beside this
# project and never committed); the same N claims are then composed by it
# after function-inferno, and both are printed side by side.
N ?= 200
SCALE_FLAGS ?=
PEER ?=
.PHONY: scale
scale: $(E2E_TOOLS) $(E2E_XP_CLI)
	cd test/e2e && E2E_BIN_DIR=$(abspath $(E2E_BIN_DIR)) E2E_REPO_ROOT=$(abspath .) \
		go test -tags e2e -count=1 -timeout 180m -run 'TestInferno/(01|15)' -v . -args -scale=$(N) $(if $(PEER),-scale-peer=$(abspath $(PEER))) $(SCALE_FLAGS)

# The NetworkPolicy engine of scenario 33: kube-router's firewall
# (github.com/cloudnativelabs/kube-router/v2 v2.1.0, its own command, a tool
# directive as epp), run on the host for the real node with its router and
# service proxy off. It enforces NetworkPolicy with iptables and ipsets
# (Debian's ipset), which this project's kernels have; SIG Network's
# kube-network-policies needs nftables' queue expression, which they lack.
# The version is stamped as kube-router's release build does (unstamped, it
# logs a version-parse warning at start). 190 s cold on a quiet machine here
# (2026-12-06, 22 s of it downloads).
E2E_KUBE_ROUTER_VERSION = $(call e2e_module_version,github.com/cloudnativelabs/kube-router/v2,tools/e2e/kuberouter)

$(E2E_KUBE_ROUTER): tools/e2e/kuberouter/go.mod
	$(call e2e_build_tool,github.com/cloudnativelabs/kube-router/v2/cmd/kube-router,tools/e2e/kuberouter,-X=github.com/cloudnativelabs/kube-router/v2/pkg/version.Version=$(E2E_KUBE_ROUTER_VERSION))

# provider-kubernetes for the fleet scenarios (37a-d): the hub's Objects
# reach the workload clusters through it. v1.2.1, the newest that builds
# here (v1.3.x needs a module the proxy refuses, v1.4.x a newer Go); a tool
# directive pins it, and its build list is the module's own go.mod's (no
# replace directives, nothing else in the tools module), so this is `go
# build ./cmd/provider` in the module's directory. The version is stamped
# as its Makefile does. Cold figure: docs/testing.md.
E2E_PROVIDER_KUBERNETES_VERSION = $(call e2e_module_version,github.com/crossplane-contrib/provider-kubernetes,tools/e2e/provider-kubernetes)

$(E2E_PROVIDER_KUBERNETES): tools/e2e/provider-kubernetes/go.mod
	$(call e2e_build_tool,github.com/crossplane-contrib/provider-kubernetes/cmd/provider,tools/e2e/provider-kubernetes,-X=github.com/crossplane-contrib/provider-kubernetes/internal/version.Version=$(E2E_PROVIDER_KUBERNETES_VERSION))

# llama.cpp's llama-server for scenario 32, the llamacpp preset against its
# real server. Not a Go module: node-llama-cpp's npm package carries
# llama.cpp's source (llama/gitRelease.bundle) and
# @node-llama-cpp/linux-x64 of the same version its prebuilt libllama and
# libggml*; tools/e2e/llama/build.sh compiles only the server against them
# (needs npm, git, g++). 2-3 minutes cold here, a second warm (the
# packages, source and objects stay in bin/llama-build/, one set per
# version); bumping the version rebuilds.
E2E_LLAMA_VERSION := 3.21.1

$(E2E_LLAMA): tools/e2e/llama/build.sh test/e2e/e2e.mk
	@echo "e2e-tools: building $@ from node-llama-cpp@$(E2E_LLAMA_VERSION)"
	@start=$$(date +%s); \
	tools/e2e/llama/build.sh $(E2E_LLAMA_VERSION) $(dir $@) $(E2E_BIN_DIR)/llama-build || exit 1; \
	echo "e2e-tools: built $@ in $$(( $$(date +%s) - start ))s"

# Ollama's server for scenario 36, the ollama preset against its real
# server: github.com/ollama/ollama at the preset's image tag (a tool
# directive pins it, as epp), built with cgo, which compiles ggml's CPU
# backend and llama.cpp into the one binary; no cmake (cmake builds only the
# optional GPU backends and per-CPU variants, which the binary does without).
# Go module zips leave out every vendor/ directory, so three header-only
# libraries Ollama's llama.cpp includes (nlohmann/json, stb, miniaudio) are
# missing from the module: they are taken from llama.cpp's source, which
# the llama-server build above already unpacks from node-llama-cpp's bundle
# (3.21.1's copies compile with Ollama v0.12.3): llama-server is an
# order-only prerequisite, built first but no reason to rebuild. -O2 without -g: cgo's
# default flags add -g, which only slows the C++ compiles of a binary that
# is stripped anyway. The version is stamped as Ollama's release build does
# (/api/version reports it). Cold figure: docs/testing.md.
E2E_OLLAMA_VERSION = $(call e2e_module_version,github.com/ollama/ollama,tools/e2e/ollama)
E2E_OLLAMA_INC := $(E2E_BIN_DIR)/ollama-build/include

$(E2E_OLLAMA): tools/e2e/ollama/go.mod | $(E2E_LLAMA)
	@mkdir -p $(dir $@)
	@echo "e2e-tools: building $@ from github.com/ollama/ollama $(E2E_OLLAMA_VERSION)"
	@start=$$(date +%s); \
	rm -rf $(E2E_OLLAMA_INC) && mkdir -p $(E2E_OLLAMA_INC) && \
	cp -R $(E2E_BIN_DIR)/llama-build/llama.cpp-$(E2E_LLAMA_VERSION)/vendor/nlohmann \
		$(E2E_BIN_DIR)/llama-build/llama.cpp-$(E2E_LLAMA_VERSION)/vendor/stb \
		$(E2E_BIN_DIR)/llama-build/llama.cpp-$(E2E_LLAMA_VERSION)/vendor/miniaudio $(E2E_OLLAMA_INC)/ && \
	cd tools/e2e/ollama && CGO_ENABLED=1 CGO_CPPFLAGS='-I$(abspath $(E2E_OLLAMA_INC))' CGO_CFLAGS=-O2 CGO_CXXFLAGS=-O2 \
		$(E2E_GO_BUILD) -ldflags='$(E2E_LDFLAGS) -X=github.com/ollama/ollama/version.Version=$(E2E_OLLAMA_VERSION:v%=%)' \
		-o $(abspath $@) github.com/ollama/ollama || exit 1; \
	echo "e2e-tools: built $@ in $$(( $$(date +%s) - start ))s"
