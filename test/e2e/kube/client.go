// Package kube is the test's Kubernetes client: typed and dynamic clients
// for one identity, applying multi-document YAML with server-side apply,
// and polling objects until a condition holds.
package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// FieldManager is the server-side apply field manager of everything the
// test applies.
const FieldManager = "inferno-e2e"

// Client talks to the API server as one identity.
type Client struct {
	Config  *rest.Config
	Typed   kubernetes.Interface
	Dynamic dynamic.Interface
	mapper  *restmapper.DeferredDiscoveryRESTMapper

	warnMu   sync.Mutex
	warnings []string
}

// NewClient builds the clients for cfg. Warnings the API server returns
// (e.g. Pod Security "would violate" messages) are collected, not printed.
func NewClient(cfg *rest.Config) (*Client, error) {
	c := &Client{}
	cfg = rest.CopyConfig(cfg)
	cfg.WarningHandler = warningCollector{c}
	c.Config = cfg
	var err error
	if c.Typed, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if c.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	c.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	return c, nil
}

type warningCollector struct{ c *Client }

func (w warningCollector) HandleWarningHeader(code int, agent, text string) {
	w.c.warnMu.Lock()
	defer w.c.warnMu.Unlock()
	w.c.warnings = append(w.c.warnings, text)
}

// TakeWarnings returns the API warnings received since the last call.
func (c *Client) TakeWarnings() []string {
	c.warnMu.Lock()
	defer c.warnMu.Unlock()
	w := c.warnings
	c.warnings = nil
	return w
}

// Resource returns the dynamic client for a kind, namespaced if ns is set.
// The discovery cache is reset once on a miss, because CRDs (Crossplane's,
// the XRD's) appear while the test runs.
func (c *Client) Resource(gvk schema.GroupVersionKind, ns string) (dynamic.ResourceInterface, error) {
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		c.mapper.Reset()
		if m, err = c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			return nil, fmt.Errorf("map %s: %w", gvk, err)
		}
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if ns == "" {
			ns = "default"
		}
		return c.Dynamic.Resource(m.Resource).Namespace(ns), nil
	}
	return c.Dynamic.Resource(m.Resource), nil
}

// ResetDiscovery forgets cached API discovery.
func (c *Client) ResetDiscovery() { c.mapper.Reset() }

// DecodeYAML splits multi-document YAML into objects, skipping empty
// documents.
func DecodeYAML(data []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(m) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
}

// ApplyFile server-side-applies every object in a YAML file.
func (c *Client) ApplyFile(ctx context.Context, path string) ([]*unstructured.Unstructured, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	objs, err := c.ApplyYAML(ctx, b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return objs, nil
}

// ApplyYAML server-side-applies every object in multi-document YAML.
func (c *Client) ApplyYAML(ctx context.Context, data []byte) ([]*unstructured.Unstructured, error) {
	objs, err := DecodeYAML(data)
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		applied, err := c.Apply(ctx, o)
		if err != nil {
			return nil, err
		}
		out = append(out, applied)
	}
	return out, nil
}

// Apply server-side-applies one object, forcing ownership of its fields.
func (c *Client) Apply(ctx context.Context, o *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	ri, err := c.Resource(o.GroupVersionKind(), o.GetNamespace())
	if err != nil {
		return nil, err
	}
	b, err := o.MarshalJSON()
	if err != nil {
		return nil, err
	}
	applied, err := ri.Patch(ctx, o.GetName(), types.ApplyPatchType, b, metav1.PatchOptions{FieldManager: FieldManager, Force: ptr(true)})
	if err != nil {
		return nil, fmt.Errorf("apply %s %s/%s: %w", o.GetKind(), o.GetNamespace(), o.GetName(), err)
	}
	return applied, nil
}

// Get fetches an object by kind, namespace and name.
func (c *Client) Get(ctx context.Context, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
	ri, err := c.Resource(gvk, ns)
	if err != nil {
		return nil, err
	}
	return ri.Get(ctx, name, metav1.GetOptions{})
}

// List lists objects of a kind in a namespace ("" for all or cluster scope)
// matching a label selector.
func (c *Client) List(ctx context.Context, gvk schema.GroupVersionKind, ns, selector string) ([]unstructured.Unstructured, error) {
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		c.mapper.Reset()
		if m, err = c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			return nil, err
		}
	}
	var ri dynamic.ResourceInterface = c.Dynamic.Resource(m.Resource)
	if ns != "" && m.Scope.Name() == meta.RESTScopeNameNamespace {
		ri = c.Dynamic.Resource(m.Resource).Namespace(ns)
	}
	l, err := ri.List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

// Delete deletes an object in the foreground; a missing object is not an
// error.
func (c *Client) Delete(ctx context.Context, gvk schema.GroupVersionKind, ns, name string) error {
	ri, err := c.Resource(gvk, ns)
	if err != nil {
		return err
	}
	err = ri.Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: ptr(metav1.DeletePropagationForeground)})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// Eventually polls check every interval until it returns true or timeout
// passes; the error names what was awaited and the last thing check said.
func Eventually(ctx context.Context, timeout, interval time.Duration, what string, check func(ctx context.Context) (bool, string, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last string
	for {
		ok, why, err := check(ctx)
		if err != nil && !apierrors.IsNotFound(err) {
			last = err.Error()
		} else if why != "" {
			last = why
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			if last == "" {
				last = "no detail"
			}
			return fmt.Errorf("timed out after %s waiting for %s (last: %s)", timeout, what, last)
		case <-time.After(interval):
		}
	}
}

// Condition returns the status, reason and message of a status condition of
// an object ("" if absent).
func Condition(o *unstructured.Unstructured, typ string) (status, reason, message string) {
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != typ {
			continue
		}
		s, _ := m["status"].(string)
		r, _ := m["reason"].(string)
		msg, _ := m["message"].(string)
		return s, r, msg
	}
	return "", "", ""
}

// ConditionsSummary renders all conditions compactly for failure messages.
func ConditionsSummary(o *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	var parts []string
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		p := fmt.Sprintf("%v=%v", m["type"], m["status"])
		if r, _ := m["reason"].(string); r != "" {
			p += "(" + r + ")"
		}
		if msg, _ := m["message"].(string); msg != "" {
			p += ": " + msg
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

func ptr[T any](v T) *T { return &v }
