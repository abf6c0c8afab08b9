package resolve

import (
	"fmt"
	"strings"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
	corev1 "k8s.io/api/core/v1"
)

// multiNode is how one model server spreads over its GPUs and pods
// (spec.nodes, spec.parallelism), checked and defaulted.
type multiNode struct {
	// Nodes is the pods of one server (a LeaderWorkerSet group's size).
	Nodes int32
	// Tensor and Pipeline are the parallel sizes; their product is
	// Nodes × GPUs per pod.
	Tensor, Pipeline int32
	// RayPort and ServerCommand are the runtime's multi-node preset.
	RayPort       int32
	ServerCommand []string
}

// MaxGroups is the most LeaderWorkerSet groups (spec.replicas.min with
// spec.nodes > 1) one claim may run: it bounds the NetworkPolicies of a
// claim, one per group and surge group (docs/configuration.md, "Objects
// per claim"). 32 groups of up to 16 nodes are 512 nodes.
const MaxGroups = 32

// Runtime flags the function sets for a parallel server (vLLM's names);
// spec.serve.args must not set them.
const (
	FlagTensorParallel   = "--tensor-parallel-size"
	FlagPipelineParallel = "--pipeline-parallel-size"
	flagExecutorBackend  = "--distributed-executor-backend"
)

// Groups says the servers run as LeaderWorkerSet groups of several pods.
func (s *Spec) Groups() bool { return s.MultiNode != nil && s.MultiNode.Nodes > 1 }

// resolveMultiNode checks spec.nodes and spec.parallelism against the
// runtime's preset, the GPUs per pod and the rest of the spec; nil when
// the claim sets neither, or only spec.nodes 1 (one pod per server, no
// parallel flags).
//
//  1. Only a runtime whose preset has multiNode accepts either field, and
//     spec.nodes at most its maxNodes.
//  2. Either needs spec.resources.gpu ≥ 1: the sizes count GPUs.
//  3. tensor defaults to the GPUs per pod, pipeline to spec.nodes (vLLM's
//     advice: tensor parallel within a node, pipeline parallel across
//     nodes); tensor × pipeline must be spec.nodes × GPUs per pod.
//  4. With spec.nodes > 1: no spec.traffic (canary versions) and no
//     spec.autoscaling (not supported, see docs/multi-node.md), and
//     pulled weights on a ReadWriteMany volume, which every node of a
//     group mounts.
//  5. spec.serve.args must not set the flags the function sets.
//  6. With spec.nodes > 1 and one group, a warning: a rollout replaces it
//     in place.
func resolveMultiNode(spec v1alpha1.InferenceServiceSpec, fw v1alpha1.Framework, rt v1beta1.RuntimePreset, gpu int32, m Model, st storage, errs *FieldErrors, warnings *[]string) *multiNode {
	// spec.nodes 1 alone is the default: one pod, no flags.
	if spec.Parallelism == nil && (spec.Nodes == nil || *spec.Nodes == 1) {
		return nil
	}
	out := &multiNode{Nodes: 1}
	if spec.Nodes != nil {
		out.Nodes = *spec.Nodes
	}
	preset := rt.MultiNode
	limit := int32(1)
	if preset != nil {
		limit = preset.NodeLimit()
		out.RayPort, out.ServerCommand = preset.RayHeadPort(), preset.ServerCommand
	}
	switch {
	case out.Nodes < 1:
		errs.Add("spec.nodes", "%d is less than 1; use 1 for a server on one node, or more to spread it over nodes", out.Nodes)
		return nil
	case preset == nil && fw != "":
		field := "spec.nodes"
		if out.Nodes == 1 {
			field = "spec.parallelism"
		}
		errs.Add(field, "the %s runtime cannot spread a model over several GPUs or nodes in the platform's Input (input.runtimes.%s has no multiNode); remove it, or use framework vllm", fw, fw)
		return nil
	case out.Nodes > limit:
		errs.Add("spec.nodes", "%d is over the limit of %d nodes per server of the %s runtime (input.runtimes.%s.multiNode.maxNodes); use at most %d", out.Nodes, limit, fw, fw, limit)
		return nil
	case len(preset.ServerCommand) == 0:
		errs.Add("input.runtimes."+string(fw)+".multiNode.serverCommand", "is empty; the Composition's Input must name the %s server command the leader runs", fw)
		return nil
	case gpu < 1:
		errs.Add("spec.resources.gpu", "is %d; spec.nodes and spec.parallelism spread a model over GPUs, so request 1 or more GPUs per pod", gpu)
		return nil
	}
	out.Tensor, out.Pipeline = gpu, out.Nodes
	if p := spec.Parallelism; p != nil {
		if p.Tensor != nil {
			out.Tensor = *p.Tensor
		}
		if p.Pipeline != nil {
			out.Pipeline = *p.Pipeline
		}
	}
	bad := false
	if out.Tensor < 1 {
		errs.Add("spec.parallelism.tensor", "%d is less than 1; use the GPUs per pod (%d)", out.Tensor, gpu)
		bad = true
	}
	if out.Pipeline < 1 {
		errs.Add("spec.parallelism.pipeline", "%d is less than 1; use the number of nodes (%d)", out.Pipeline, out.Nodes)
		bad = true
	}
	if have := out.Nodes * gpu; !bad && out.Tensor*out.Pipeline != have {
		errs.Add("spec.parallelism", "tensor (%d) × pipeline (%d) is %d GPUs, but spec.nodes (%d) × spec.resources.gpu (%d) gives each server %d; they must be equal: use tensor %d and pipeline %d (tensor parallel within a node, pipeline parallel across nodes), or change spec.nodes or spec.resources.gpu", out.Tensor, out.Pipeline, out.Tensor*out.Pipeline, out.Nodes, gpu, have, gpu, out.Nodes)
	}
	if sv := spec.Serve; sv != nil {
		for i, a := range sv.Args {
			for _, f := range []string{FlagTensorParallel, FlagPipelineParallel, flagExecutorBackend, "--tensor_parallel_size", "--pipeline_parallel_size", "-tp", "-pp"} {
				if a == f || strings.HasPrefix(a, f+"=") {
					errs.Add(fmt.Sprintf("spec.serve.args[%d]", i), "%q is set by the function from spec.parallelism and spec.nodes; remove it", a)
				}
			}
		}
	}
	if out.Nodes == 1 {
		return out
	}
	checkRayPorts(out, fw, rt, spec.Serve, errs)
	if r := spec.Replicas; r != nil && r.Min != nil && *r.Min > MaxGroups {
		errs.Add("spec.replicas.min", "%d groups of %d nodes is over the %d groups one claim may run (each group has a NetworkPolicy of its own, and a rollout surges more); use at most %d, or split the service over claims", *r.Min, out.Nodes, MaxGroups, MaxGroups)
	}
	if len(spec.Traffic) > 0 {
		errs.Add("spec.traffic", "canary versions are not supported with spec.nodes > 1 (each version would need its own groups of %d nodes); remove spec.traffic, or roll the new weights out in place by changing spec.model (the groups roll one at a time, input.rollout)", out.Nodes)
	}
	if a := spec.Autoscaling; a != nil && a.Enabled {
		errs.Add("spec.autoscaling.enabled", "autoscaling is not supported with spec.nodes > 1: a new group of %d nodes takes as long to start as the load it would absorb; set it to false and size spec.replicas.min, the number of groups", out.Nodes)
	}
	// The LWS controller surges only when there are more groups than
	// maxSurge, so it replaces a lone group in place (measured in the e2e
	// with the real controller).
	if r := spec.Replicas; r == nil || r.Min == nil || *r.Min == 1 {
		*warnings = append(*warnings, fmt.Sprintf("spec.replicas.min: one group of %d nodes is replaced in place by every rollout (the LeaderWorkerSet controller adds a surge group only when there are more groups than input.rollout.maxSurge), so the service stops answering while the new group loads the model; run 2 or more groups to upgrade while serving", out.Nodes))
	}
	switch {
	case m.pulled() && st.AccessMode != corev1.ReadWriteMany:
		field := "input.storage.accessMode"
		if spec.Storage != nil && spec.Storage.AccessMode != "" {
			field = "spec.storage.accessMode"
		}
		errs.Add(field, "is %s, but the %d pods of a server run on %d nodes and all mount the weights volume; use ReadWriteMany (a storage class that supports it, e.g. NFS or CephFS)", st.AccessMode, out.Nodes, out.Nodes)
	case m.Scheme == SchemePVC:
		*warnings = append(*warnings, fmt.Sprintf("spec.model.uri: the %d pods of a server run on %d nodes and all mount %s; it must be ReadWriteMany or ReadOnlyMany, or the workers never start", out.Nodes, out.Nodes, m.Claim))
	case m.Cache != "":
		*warnings = append(*warnings, fmt.Sprintf("spec.model.cacheRef: the %d pods of a server run on %d nodes and all mount the ModelCache %s's volume; it must be ReadWriteMany, or the workers never start", out.Nodes, out.Nodes, m.Cache))
	}
	return out
}

// Ports the leader's Ray head listens on besides RayPort, as `ray start
// --head` opens them by default: its dashboard, its client server, its
// dashboard agent, and the range its workers take ports from.
const (
	rayDashboardPort      = 8265
	rayClientPort         = 10001
	rayDashboardAgentPort = 52365
	rayMinWorkerPort      = 10002
	rayMaxWorkerPort      = 19999
)

// rayPortOf names the Ray head's use of port p; "" when it has none.
func rayPortOf(p int32, mn *multiNode) string {
	switch {
	case p == mn.RayPort:
		return fmt.Sprintf("the Ray head's own port (%d)", mn.RayPort)
	case p == rayDashboardPort:
		return "Ray's dashboard"
	case p == rayClientPort:
		return "Ray's client server"
	case p == rayDashboardAgentPort:
		return "Ray's dashboard agent"
	case p >= rayMinWorkerPort && p <= rayMaxWorkerPort:
		return fmt.Sprintf("among Ray's worker ports (%d-%d)", rayMinWorkerPort, rayMaxWorkerPort)
	}
	return ""
}

// checkRayPorts refuses a group whose serving or metrics port is one the
// leader's Ray head listens on: the server could not bind it, or, worse,
// the servers' NetworkPolicy admits the claim's namespace (and the
// Gateway's, and the metrics namespace) to that port, which would open the
// Ray head, which runs code for whoever reaches it, to all of them.
func checkRayPorts(mn *multiNode, fw v1alpha1.Framework, rt v1beta1.RuntimePreset, sv *v1alpha1.ServeSpec, errs *FieldErrors) {
	const why = "%d is %s on each group's leader (spec.nodes %d), which the servers' NetworkPolicy would open to the namespaces it admits, and whoever reaches Ray runs code in the group; use another port, e.g. 8000"
	if p := rt.Port; p != nil {
		if use := rayPortOf(*p, mn); use != "" {
			if sv != nil && sv.Port != nil {
				errs.Add("spec.serve.port", why, *p, use, mn.Nodes)
			} else {
				errs.Add("input.runtimes."+string(fw)+".port", why, *p, use, mn.Nodes)
			}
		}
	}
	if p := rt.MetricsPort; p != nil {
		if use := rayPortOf(*p, mn); use != "" {
			errs.Add("input.runtimes."+string(fw)+".metricsPort", why, *p, use, mn.Nodes)
		}
	}
}

// checkGroupIsolation refuses groups (spec.nodes > 1) that nothing
// isolates: the leader runs a Ray head without authentication, and
// whoever reaches its ports runs code in the group. Either the Input's
// NetworkPolicy is on (each group then gets a policy that admits only its
// own pods to them, render.GroupPolicy), or the runtime's multiNode preset
// says the cluster isolates the groups itself (isolatedByCluster).
func checkGroupIsolation(mn *multiNode, fw v1alpha1.Framework, rt v1beta1.RuntimePreset, np *networkPolicy, errs *FieldErrors) {
	if mn == nil || mn.Nodes < 2 || np != nil || rt.MultiNode == nil || rt.MultiNode.IsolatedByCluster {
		return
	}
	errs.Add("spec.nodes", "%d needs the groups isolated, and the platform's Input does not: each group's leader runs a Ray head without authentication on port %d (and Ray opens more), so any pod that reaches it runs code in the group; the platform must turn on input.networkPolicy.enabled (each group then admits only its own pods to them) or, if the cluster isolates the groups itself, set input.runtimes.%s.multiNode.isolatedByCluster; or use spec.nodes 1", mn.Nodes, mn.RayPort, fw)
}

// args are the runtime flags of the parallel sizes, and on more than one
// node Ray as the executor.
func (mn *multiNode) args() []string {
	a := []string{
		fmt.Sprintf("%s=%d", FlagTensorParallel, mn.Tensor),
		fmt.Sprintf("%s=%d", FlagPipelineParallel, mn.Pipeline),
	}
	if mn.Nodes > 1 {
		a = append(a, flagExecutorBackend+"=ray")
	}
	return a
}
