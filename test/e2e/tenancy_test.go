//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"github.com/inferno-ai/function-inferno/test/e2e/controlplane"
	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// The tenancy scenario's namespaces and names.
const (
	// tenantTeam is the namespace of the spoofing composite and of the
	// tenant whose RBAC is checked.
	tenantTeam = "team-spoof"
	// victimTeam and victimName are whom the spoofing composite's claim
	// labels point at.
	victimTeam, victimName = "team-a", "llama"
	// spoofName is the spoofing namespaced composite.
	spoofName = "innocent"
	// tenancyComposition is the namespaced XRD's Composition with a
	// Gateway and NetworkPolicies in its Input.
	tenancyComposition = "inferenceservices.inference.inferno.dev-tenancy"
	// victimCache is a ModelCache in the victim's namespace that the
	// spoofing composite names in its cacheRef.
	victimCache = "spoof-target"
)

var httpRouteGVK = schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"}

// --- 21 tenancy -------------------------------------------------------------

// tenancy runs issue 14's steps through the real control plane: a
// namespaced composite whose claim labels name team-a's llama composes
// only in its own namespace, under its own name, with its own route
// hostname, URLs and ModelCache lookup; the NetworkPolicies it gets are
// accepted by the real API server; and a tenant who may create claims in
// its namespace cannot create the cluster-scoped composites, which could
// target any namespace.
func (s *infernoSuite) tenancy(t *testing.T) {
	ctx := context.Background()
	if err := env.createTeamNamespace(ctx, tenantTeam); err != nil {
		t.Fatal(err)
	}
	t.Run("spoofed-claim-labels", s.tenancySpoof)
	t.Run("tenant-rbac", s.tenancyRBAC)
}

// tenancySpoof applies the spoofing composite and checks what it composes.
func (s *infernoSuite) tenancySpoof(t *testing.T) {
	ctx := context.Background()
	sc := env.summary.start(t, "21 tenancy: spoofed claim labels, NetworkPolicy")

	// The route needs the HTTPRoute kind; no Gateway controller runs, so
	// the route stays unaccepted, which changes nothing here.
	crd := installHTTPRouteCRD(ctx, t)
	t.Cleanup(func() {
		if err := env.admin.Delete(context.Background(), schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}, "", crd); err != nil && !apierrors.IsNotFound(err) {
			t.Logf("deleting CRD %s: %v", crd, err)
		}
	})
	if err := env.createTeamNamespace(ctx, victimTeam); err != nil {
		t.Fatal(err)
	}
	// A ModelCache in the victim's namespace, named by the spoofing
	// composite's cacheRef: the lookup must not find it.
	cache := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": cacheClaimGVK.GroupVersion().String(), "kind": cacheClaimGVK.Kind,
		"metadata": map[string]any{"name": victimCache, "namespace": victimTeam},
		"spec":     map[string]any{"uri": "hf://e2e/spoof-target", "storage": map[string]any{"size": "1Gi"}},
	}}
	applyClaim(ctx, t, cache)
	t.Cleanup(func() { _ = env.admin.Delete(context.Background(), cacheClaimGVK, victimTeam, victimCache) })

	comp := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.crossplane.io/v1", "kind": "Composition",
		"metadata": map[string]any{"name": tenancyComposition},
		"spec": map[string]any{
			"compositeTypeRef": map[string]any{"apiVersion": namespacedGVK.GroupVersion().String(), "kind": namespacedGVK.Kind},
			"mode":             "Pipeline",
			"pipeline": []any{map[string]any{
				"step": "render", "functionRef": map[string]any{"name": RealFunctionName},
				"input": map[string]any{
					"apiVersion": "fn.inferno.io/v1beta1", "kind": "Input",
					"traffic":       map[string]any{"gateway": map[string]any{"name": "inference", "namespace": "gateways", "domain": "models.example.com"}},
					"networkPolicy": map[string]any{"enabled": true, "metricsNamespace": "monitoring"},
				},
			}},
		},
	}}
	if _, err := env.admin.Apply(ctx, comp); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.admin.Delete(context.Background(), schema.GroupVersionKind{Group: "apiextensions.crossplane.io", Version: "v1", Kind: "Composition"}, "", tenancyComposition)
	})

	// innocent in team-spoof, labelled as team-a's claim llama: a 90/10
	// split (so it gets an HTTPRoute), and a second one on a ModelCache.
	spoof := func(name string, spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": namespacedGVK.GroupVersion().String(), "kind": namespacedGVK.Kind,
			"metadata": map[string]any{"name": name, "namespace": tenantTeam, "labels": map[string]any{
				"crossplane.io/claim-name": victimName, "crossplane.io/claim-namespace": victimTeam,
			}},
			"spec": spec,
		}}
	}
	small := smallClaim(t, tenantTeam, spoofName).Object["spec"].(map[string]any)
	small["model"] = map[string]any{"uri": "hf://e2e/tenancy-v1", "version": "1", "framework": "fake"}
	small["replicas"] = map[string]any{"min": int64(2), "max": int64(2)}
	small["traffic"] = []any{
		map[string]any{"version": "1", "weight": int64(90)},
		map[string]any{"version": "2", "weight": int64(10), "uri": "hf://e2e/tenancy-v2"},
	}
	small["crossplane"] = map[string]any{"compositionRef": map[string]any{"name": tenancyComposition}}
	onCache := map[string]any{
		"model":      map[string]any{"cacheRef": map[string]any{"name": victimCache}, "framework": "fake"},
		"replicas":   map[string]any{"min": int64(1)},
		"resources":  map[string]any{"cpu": "100m", "memory": "256Mi", "gpu": int64(0)},
		"crossplane": map[string]any{"compositionRef": map[string]any{"name": tenancyComposition}},
	}
	start := time.Now()
	applyClaim(ctx, t, spoof(spoofName, small))
	applyClaim(ctx, t, spoof(spoofName+"-cache", onCache))
	t.Cleanup(func() {
		for _, n := range []string{spoofName, spoofName + "-cache"} {
			_ = env.admin.Delete(context.Background(), namespacedGVK, tenantTeam, n)
		}
	})

	// Its route, URLs and NetworkPolicies are its own.
	wantHost := fmt.Sprintf("%s.%s.models.example.com", spoofName, tenantTeam)
	err := kube.Eventually(ctx, 3*time.Minute, 500*time.Millisecond, "the spoofing composite routed under its own name", func(ctx context.Context) (bool, string, error) {
		xr, err := env.admin.Get(ctx, namespacedGVK, tenantTeam, spoofName)
		if err != nil {
			return false, "", err
		}
		url, _, _ := unstructured.NestedString(xr.Object, "status", "url")
		routeURL, _, _ := unstructured.NestedString(xr.Object, "status", "routeURL")
		route, err := env.admin.Get(ctx, httpRouteGVK, tenantTeam, spoofName)
		hosts := []string{}
		if err == nil {
			hosts, _, _ = unstructured.NestedStringSlice(route.Object, "spec", "hostnames")
		}
		done := url == fmt.Sprintf("http://%s.%s.svc.cluster.local:80", spoofName, tenantTeam) && routeURL == "http://"+wantHost && slices.Equal(hosts, []string{wantHost})
		return done, fmt.Sprintf("url %q, routeURL %q, route hostnames %v; %s", url, routeURL, hosts, conditionsOf(xr)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sc.note("spoofing composite routed as %s in %.1fs", wantHost, time.Since(start).Seconds())

	xr, err := env.admin.Get(ctx, namespacedGVK, tenantTeam, spoofName)
	if err != nil {
		t.Fatal(err)
	}
	// Everything it controls, of every kind it composes, in any namespace.
	owned := ownedBy(ctx, t, xr.GetUID())
	for _, kind := range []struct {
		gvk  schema.GroupVersionKind
		name string
	}{
		{httpRouteGVK, "HTTPRoute"},
		{schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"}, "NetworkPolicy"},
	} {
		list, err := env.admin.List(ctx, kind.gvk, "", "")
		if err != nil {
			t.Fatal(err)
		}
		for i := range list {
			if c := metav1.GetControllerOfNoCopy(&list[i]); c != nil && c.UID == xr.GetUID() {
				owned = append(owned, ownedObject{kind.name, list[i].GetNamespace(), list[i].GetName()})
			}
		}
	}
	var kinds []string
	for _, o := range owned {
		kinds = append(kinds, o.kind)
		if o.namespace != tenantTeam {
			t.Errorf("%s %s/%s is outside the composite's namespace %s", o.kind, o.namespace, o.name, tenantTeam)
		}
		if o.name != spoofName && !strings.HasPrefix(o.name, spoofName+"-") && !strings.HasPrefix(o.name, spoofName+".") {
			t.Errorf("%s %s is not named after the composite %s (its labels say %s)", o.kind, o.name, spoofName, victimName)
		}
	}
	slices.Sort(kinds)
	kinds = slices.Compact(kinds)
	if want := []string{"Deployment", "HTTPRoute", "Job", "NetworkPolicy", "PersistentVolumeClaim", "Service"}; !slices.Equal(kinds, want) {
		t.Errorf("kinds the composite controls: %v, want %v", kinds, want)
	}
	sc.note("%d objects controlled by %s/%s, all in %s and named after it", len(owned), tenantTeam, spoofName, tenantTeam)

	// The ModelCache lookup stays in its namespace: team-a's cache of that
	// name is not found.
	err = kube.Eventually(ctx, time.Minute, 500*time.Millisecond, "the spoofing composite's cache looked up in its own namespace", func(ctx context.Context) (bool, string, error) {
		x, err := env.admin.Get(ctx, namespacedGVK, tenantTeam, spoofName+"-cache")
		if err != nil {
			return false, "", err
		}
		_, reason, msg := kube.Condition(x, "WeightsReady")
		return reason == "CacheMissing" && strings.Contains(msg, "namespace "+tenantTeam), fmt.Sprintf("WeightsReady %s: %s", reason, msg), nil
	})
	if err != nil {
		t.Error(err)
	}

	// The NetworkPolicies, as the real API server stored them.
	np, err := env.admin.Typed.NetworkingV1().NetworkPolicies(tenantTeam).Get(ctx, spoofName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var from []string
	for _, r := range np.Spec.Ingress {
		for _, p := range r.From {
			if p.NamespaceSelector != nil {
				from = append(from, p.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"])
			}
		}
	}
	if want := []string{tenantTeam, "gateways", "monitoring"}; !slices.Equal(from, want) {
		t.Errorf("the servers' NetworkPolicy admits namespaces %v, want %v", from, want)
	}
	pull, err := env.admin.Typed.NetworkingV1().NetworkPolicies(tenantTeam).Get(ctx, spoofName+".pull", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pull.Spec.Ingress) != 0 || !slices.Equal(pull.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) {
		t.Errorf("the pull pods' NetworkPolicy admits traffic: %+v", pull.Spec)
	}
	sc.note("NetworkPolicies %s (from %v) and %s.pull (no ingress) accepted by the API server", np.Name, from, spoofName)

	// Nothing of it in the victim's namespace.
	if left := composedLeft(ctx, victimTeam, spoofName); len(left) > 1 || (len(left) == 1 && left[0] != "claim") {
		t.Errorf("objects of %s in %s: %v", spoofName, victimTeam, left)
	}
	for _, kind := range []string{"Deployment", "Service"} {
		var refs []metav1.OwnerReference
		switch kind {
		case "Deployment":
			if d, err := env.admin.Typed.AppsV1().Deployments(victimTeam).Get(ctx, victimName, metav1.GetOptions{}); err == nil {
				refs = d.OwnerReferences
			}
		case "Service":
			if d, err := env.admin.Typed.CoreV1().Services(victimTeam).Get(ctx, victimName, metav1.GetOptions{}); err == nil {
				refs = d.OwnerReferences
			}
		}
		for _, r := range refs {
			if r.UID == xr.GetUID() {
				t.Errorf("%s %s/%s is controlled by the spoofing composite", kind, victimTeam, victimName)
			}
		}
	}
}

// installHTTPRouteCRD applies Gateway API's HTTPRoute CRD from the module
// the function builds against, and waits until it is established.
func installHTTPRouteCRD(ctx context.Context, t *testing.T) string {
	t.Helper()
	dir := moduleDir(t, "sigs.k8s.io/gateway-api", "")
	return applyCRDFile(ctx, t, filepath.Join(dir, "config", "crd", "standard", "gateway.networking.k8s.io_httproutes.yaml"))
}

// tenancyRBAC gives a tenant what a platform gives a team — the built-in
// edit role and create on the claims, bound in its namespace — and shows
// it can create claims there but not the cluster-scoped composites, whose
// claim labels would let it compose into any namespace.
func (s *infernoSuite) tenancyRBAC(t *testing.T) {
	ctx := context.Background()
	sc := env.summary.start(t, "21 tenancy: tenant RBAC")
	tenant := controlplane.Identity{User: "tenant-dev", Groups: []string{"team-spoof-devs", "system:authenticated"}}

	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "inferno-claims-editor"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"inference.inferno.io"}, Resources: []string{"inferenceservices", "modelcaches"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
			{APIGroups: []string{"inference.inferno.dev"}, Resources: []string{"inferenceservices"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		},
	}
	if _, err := env.admin.Typed.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for _, bind := range []struct{ name, role string }{{"team-edit", "edit"}, {"team-inference", role.Name}} {
		rb := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: bind.name, Namespace: tenantTeam},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "team-spoof-devs"}},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: bind.role},
		}
		if _, err := env.admin.Typed.RbacV1().RoleBindings(tenantTeam).Create(ctx, rb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}

	checks := []struct {
		group, resource, ns string
		want                bool
	}{
		{"inference.inferno.io", "inferenceservices", tenantTeam, true},
		{"inference.inferno.io", "modelcaches", tenantTeam, true},
		{"inference.inferno.dev", "inferenceservices", tenantTeam, true},
		{"inference.inferno.io", "xinferenceservices", "", false},
		{"inference.inferno.io", "xmodelcaches", "", false},
		{"inference.inferno.io", "inferenceservices", victimTeam, false},
	}
	err := kube.Eventually(ctx, 30*time.Second, 500*time.Millisecond, "the tenant's permissions", func(ctx context.Context) (bool, string, error) {
		var wrong []string
		for _, c := range checks {
			if ok, _ := can(ctx, t, tenant, "create", c.group, c.resource, c.ns); ok != c.want {
				wrong = append(wrong, fmt.Sprintf("create %s.%s in %q: %v", c.resource, c.group, c.ns, ok))
			}
		}
		return len(wrong) == 0, strings.Join(wrong, "; "), nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// For real, as the tenant: a claim is created, a composite is refused.
	cfg := rest.CopyConfig(env.admin.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: tenant.User, Groups: tenant.Groups}
	as, err := kube.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	claim := smallClaim(t, tenantTeam, "tenant-claim")
	if _, err := as.Apply(ctx, claim); err != nil {
		t.Errorf("the tenant cannot create a claim in its namespace: %v", err)
	}
	_ = env.admin.Delete(ctx, claimGVK, tenantTeam, "tenant-claim")
	xr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": xrGVK.GroupVersion().String(), "kind": xrGVK.Kind,
		"metadata": map[string]any{"name": "tenant-xr", "labels": map[string]any{
			"crossplane.io/claim-name": victimName, "crossplane.io/claim-namespace": victimTeam,
		}},
		"spec": claim.Object["spec"],
	}}
	_, err = as.Apply(ctx, xr)
	if !apierrors.IsForbidden(err) {
		_ = env.admin.Delete(ctx, xrGVK, "", "tenant-xr")
		t.Errorf("the tenant's cluster-scoped composite with team-a's claim labels: %v, want Forbidden", err)
	}
	// Crossplane itself may manage what it composes here.
	if ok, why := can(ctx, t, controlplane.Crossplane, "create", "networking.k8s.io", "networkpolicies", tenantTeam); !ok {
		t.Errorf("crossplane cannot create networkpolicies: %s (apis/rbac.yaml)", why)
	}
	sc.note("tenant creates claims in %s, is Forbidden the cluster-scoped XInferenceService (%d permission checks)", tenantTeam, len(checks))
	compositionChoice(ctx, t, sc, as)
}

// compositionChoice applies examples/locked-down/admission-policy.yaml,
// bound to the tenant's namespace, and shows that the tenant cannot choose
// another Composition (and with it another Input) for its claims, in any
// of the fields that choose one, while a claim that leaves them out is
// admitted, composed, and updated after Crossplane filled them in.
func compositionChoice(ctx context.Context, t *testing.T, sc *scenario, as *kube.Client) {
	t.Helper()
	objs, err := kube.DecodeYAML(mustRead(t, filepath.Join(repoRoot(), "examples", "locked-down", "admission-policy.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	vapGVK := schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicy"}
	var policies []string
	for _, o := range objs {
		if o.GetKind() == "ValidatingAdmissionPolicyBinding" {
			setField(o, map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": tenantTeam}}}, "spec", "matchResources")
		} else {
			policies = append(policies, o.GetName())
		}
		if _, err := env.admin.Apply(ctx, o); err != nil {
			t.Fatal(err)
		}
		o := o
		t.Cleanup(func() { _ = env.admin.Delete(context.Background(), o.GroupVersionKind(), "", o.GetName()) })
	}
	// The API server compiles a policy's expressions before it enforces it:
	// a typing error would show in its status.
	for _, p := range policies {
		got, err := env.admin.Get(ctx, vapGVK, "", p)
		if err != nil {
			t.Fatal(err)
		}
		if w, _, _ := unstructured.NestedSlice(got.Object, "status", "typeChecking", "expressionWarnings"); len(w) > 0 {
			t.Errorf("ValidatingAdmissionPolicy %s: %v", p, w)
		}
	}

	const other = "xinferenceservices-gateway.inference.inferno.io"
	cases := []struct {
		name, field string
		gvk         schema.GroupVersionKind
		set         func(c *unstructured.Unstructured)
	}{
		{"pick-ref", "spec.compositionRef", claimGVK, func(c *unstructured.Unstructured) {
			setField(c, map[string]any{"name": other}, "spec", "compositionRef")
		}},
		{"pick-selector", "spec.compositionSelector", claimGVK, func(c *unstructured.Unstructured) {
			setField(c, map[string]any{"matchLabels": map[string]any{routeLabel: "gateway"}}, "spec", "compositionSelector")
		}},
		{"pick-revision", "spec.compositionRevisionRef", claimGVK, func(c *unstructured.Unstructured) {
			setField(c, map[string]any{"name": other + "-0123456"}, "spec", "compositionRevisionRef")
		}},
		{"pin-manual", "spec.compositionUpdatePolicy", claimGVK, func(c *unstructured.Unstructured) {
			setField(c, "Manual", "spec", "compositionUpdatePolicy")
		}},
		{"pick-ref-namespaced", "spec.crossplane.compositionRef", namespacedGVK, func(c *unstructured.Unstructured) {
			c.SetAPIVersion(namespacedGVK.GroupVersion().String())
			setField(c, map[string]any{"name": "inferenceservices.inference.inferno.dev-tenancy"}, "spec", "crossplane", "compositionRef")
		}},
	}
	// The API server loads a new policy within a second or so: wait until
	// the first case is refused (a refused claim is never created).
	start := time.Now()
	err = kube.Eventually(ctx, 30*time.Second, 500*time.Millisecond, "the admission policy in force", func(ctx context.Context) (bool, string, error) {
		c := smallClaim(t, tenantTeam, "policy-probe")
		cases[0].set(c)
		if _, err := as.Apply(ctx, c); err != nil {
			return true, "", nil
		}
		_ = env.admin.Delete(ctx, claimGVK, tenantTeam, "policy-probe")
		return false, "a claim with spec.compositionRef still admitted", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	inForce := time.Since(start)
	refused := 0
	for _, tc := range cases {
		c := smallClaim(t, tenantTeam, tc.name)
		tc.set(c)
		_, err := as.Apply(ctx, c)
		if err == nil {
			_ = env.admin.Delete(ctx, tc.gvk, tenantTeam, tc.name)
			t.Errorf("%s: the tenant's claim with %s was admitted", tc.name, tc.field)
			continue
		}
		if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tc.field+":") {
			t.Errorf("%s: %v, want a refusal that names %s", tc.name, err, tc.field)
			continue
		}
		refused++
	}

	// A claim that leaves the choice to the platform: admitted, composed
	// with the default Composition (which Crossplane writes back into it),
	// and the tenant can still change it afterwards.
	const name = "platform-choice"
	c := smallClaim(t, tenantTeam, name)
	if _, err := as.Apply(ctx, c); err != nil {
		t.Fatalf("the tenant's claim without a choice of Composition: %v", err)
	}
	defer func() { _ = env.admin.Delete(context.Background(), claimGVK, tenantTeam, name) }()
	var ref string
	err = kube.Eventually(ctx, time.Minute, 250*time.Millisecond, "Crossplane fills in the claim's Composition", func(ctx context.Context) (bool, string, error) {
		got, err := env.admin.Get(ctx, claimGVK, tenantTeam, name)
		if err != nil {
			return false, "", err
		}
		ref, _, _ = unstructured.NestedString(got.Object, "spec", "compositionRef", "name")
		return ref != "", "no compositionRef yet", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := as.Resource(claimGVK, tenantTeam)
	if err != nil {
		t.Fatal(err)
	}
	// A whole-object update, as kubectl edit sends, of the claim as
	// Crossplane left it (compositionRef and all). Crossplane may write the
	// claim between the read and the update; a conflict is read again, a
	// refusal is the failure this checks for.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got, err := env.admin.Get(ctx, claimGVK, tenantTeam, name)
		if err != nil {
			return err
		}
		labels := got.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels["team"] = "spoof"
		got.SetLabels(labels)
		_, err = res.Update(ctx, got, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Errorf("the tenant's update of its claim after Crossplane chose %s: %v", ref, err)
	}
	sc.note("admission policy (examples/locked-down) in force %.1fs after apply: %d/%d choices of Composition refused by field; a claim without one composed with %s and updated", inForce.Seconds(), refused, len(cases), ref)
}
