package main

import (
	"errors"
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
)

// Packages of the Function and Configurations. Every Configuration depends
// on the same Function package; the end-to-end test rewrites the
// dependency to the reference it pushed the Function to.
const (
	functionName    = "function-inferno"
	functionPackage = "xpkg.crossplane.io/inferno-ai/function-inferno"
	functionVersion = ">=v0.1.0"
	maintainer      = "Inferno <maintainers@inferno-ai.dev>"
	source          = "github.com/inferno-ai/function-inferno"
)

// api is one way of offering the InferenceService types to a cluster: a
// CompositeResourceDefinition, its Composition and the Configuration
// package that ships both.
type api struct {
	// Dir is the package root, relative to the repository: it receives
	// crossplane.yaml, xrd.yaml and composition.yaml.
	Dir string
	// CRD is the plural of the controller-gen CRD the schema comes from.
	CRD string
	// FilePrefix starts the names of the XRD and Composition files, for a
	// second API in the same package root.
	FilePrefix string
	// SharesPackage says another API in Dir writes the package's
	// crossplane.yaml, which ships this API's XRD and Composition too.
	SharesPackage bool
	// XRDAPIVersion is apiextensions.crossplane.io/v1 or /v2.
	XRDAPIVersion string
	Group         string
	Scope         string
	Names         names
	// ClaimNames is set only for the LegacyCluster XRD: v2 XRDs refuse
	// claims.
	ClaimNames *names
	// Description replaces the type's doc comment as the schema's
	// top-level description; empty keeps it.
	Description string

	// PackageName and PackageDescription are the Configuration's.
	PackageName        string
	PackageDescription string
	// CrossplaneVersion constrains the Crossplane versions the package
	// installs on.
	CrossplaneVersion string
}

// xrdName is the XRD's name: Crossplane requires <plural>.<group>.
func (a api) xrdName() string { return a.Names.Plural + "." + a.Group }

// apis are the XRDs generated from apis/inference/v1alpha1.
var apis = []api{
	{
		Dir:           "apis",
		CRD:           "xinferenceservices",
		XRDAPIVersion: "apiextensions.crossplane.io/v1",
		Group:         v1alpha1.Group,
		Scope:         "LegacyCluster",
		Names: names{
			Kind: v1alpha1.CompositeKind, Plural: "xinferenceservices", Singular: "xinferenceservice",
			ShortNames: []string{"xinfsvc"}, Categories: []string{"crossplane", "composite", "inference"},
		},
		// KServe's InferenceService takes the short name isvc; ours must
		// not collide with it on clusters that run both.
		ClaimNames: &names{
			Kind: v1alpha1.ClaimKind, Plural: "inferenceservices", Singular: "inferenceservice",
			ShortNames: []string{"infsvc"}, Categories: []string{"crossplane", "claim", "inference"},
		},
		PackageName:        "configuration-inferno",
		PackageDescription: "The InferenceService and ModelCache APIs: XRDs with InferenceService and\nModelCache claims and the Compositions that render them with\nfunction-inferno.\n",
		CrossplaneVersion:  ">=v1.17.0-0",
	},
	{
		// Weights that outlive a service; InferenceServices refer to the
		// claim by name (spec.model.cacheRef). It ships in the claim's
		// package.
		Dir:           "apis",
		CRD:           "xmodelcaches",
		FilePrefix:    "modelcache-",
		SharesPackage: true,
		XRDAPIVersion: "apiextensions.crossplane.io/v1",
		Group:         v1alpha1.Group,
		Scope:         "LegacyCluster",
		Names: names{
			Kind: v1alpha1.CacheCompositeKind, Plural: "xmodelcaches", Singular: "xmodelcache",
			ShortNames: []string{"xmcache"}, Categories: []string{"crossplane", "composite", "inference"},
		},
		ClaimNames: &names{
			Kind: v1alpha1.CacheClaimKind, Plural: "modelcaches", Singular: "modelcache",
			ShortNames: []string{"mcache"}, Categories: []string{"crossplane", "claim", "inference"},
		},
		PackageName: "configuration-inferno",
	},
	{
		Dir:           "apis/namespaced",
		CRD:           "xinferenceservices",
		XRDAPIVersion: "apiextensions.crossplane.io/v2",
		Group:         v1alpha1.NamespacedGroup,
		Scope:         "Namespaced",
		// Neither isvc (KServe's) nor infsvc (the claim's, which a cluster
		// may serve beside this one): kubectl resolves a short name two
		// groups share to whichever it discovers first.
		Names: names{
			Kind: v1alpha1.NamespacedKind, Plural: "inferenceservices", Singular: "inferenceservice",
			ShortNames: []string{"nsinfsvc"}, Categories: []string{"crossplane", "composite", "inference"},
		},
		Description: "InferenceService is a namespaced composite resource (Crossplane v2): a\n" +
			"model, pulled once into a cache volume and served by a Deployment of the\n" +
			"chosen runtime behind a Service, all in the InferenceService's own\n" +
			"namespace and named after it.",
		PackageName:        "configuration-inferno-namespaced",
		PackageDescription: "The InferenceService API for Crossplane v2: a namespaced composite\nresource (no claim) and the Composition that renders it with\nfunction-inferno.\n",
		// apiextensions.crossplane.io/v2 XRDs exist from Crossplane v2.0.
		CrossplaneVersion: ">=v2.0.0-0",
	},
}

// The objects below mirror the fields of Crossplane's types that are
// generated, no more: the generator does not import Crossplane.

type names struct {
	Kind       string   `json:"kind"`
	Plural     string   `json:"plural"`
	Singular   string   `json:"singular"`
	ShortNames []string `json:"shortNames,omitempty"`
	Categories []string `json:"categories,omitempty"`
}

type objectMeta struct {
	Name        string            `json:"name"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type nameRef struct {
	Name string `json:"name"`
}

type xrd struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   objectMeta `json:"metadata"`
	Spec       xrdSpec    `json:"spec"`
}

type xrdSpec struct {
	Group                 string       `json:"group"`
	Scope                 string       `json:"scope"`
	Names                 names        `json:"names"`
	ClaimNames            *names       `json:"claimNames,omitempty"`
	DefaultCompositionRef nameRef      `json:"defaultCompositionRef"`
	Versions              []xrdVersion `json:"versions"`
}

type xrdVersion struct {
	Name                     string    `json:"name"`
	Served                   bool      `json:"served"`
	Referenceable            bool      `json:"referenceable"`
	AdditionalPrinterColumns []any     `json:"additionalPrinterColumns,omitempty"`
	Schema                   xrdSchema `json:"schema"`
}

type xrdSchema struct {
	OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
}

type composition struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Metadata   objectMeta      `json:"metadata"`
	Spec       compositionSpec `json:"spec"`
}

type compositionSpec struct {
	CompositeTypeRef typeRef        `json:"compositeTypeRef"`
	Mode             string         `json:"mode"`
	Pipeline         []pipelineStep `json:"pipeline"`
}

type typeRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

type pipelineStep struct {
	Step        string   `json:"step"`
	FunctionRef nameRef  `json:"functionRef"`
	Input       typeMeta `json:"input"`
}

type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

type configuration struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   objectMeta        `json:"metadata"`
	Spec       configurationSpec `json:"spec"`
}

type configurationSpec struct {
	Crossplane struct {
		Version string `json:"version"`
	} `json:"crossplane"`
	DependsOn []dependency `json:"dependsOn"`
}

type dependency struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Package    string `json:"package"`
	Version    string `json:"version"`
}

// crd is the part of a CustomResourceDefinition the XRDs are made from.
type crd struct {
	Spec struct {
		Group    string `json:"group"`
		Versions []struct {
			Name                     string         `json:"name"`
			AdditionalPrinterColumns []any          `json:"additionalPrinterColumns,omitempty"`
			Schema                   map[string]any `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

// parseCRD reads controller-gen's CRD of the composite type and returns its
// one version's schema.
func parseCRD(b []byte) (version string, columns []any, schema map[string]any, err error) {
	var c crd
	if err := yaml.Unmarshal(b, &c); err != nil {
		return "", nil, nil, fmt.Errorf("cannot parse the CRD: %w", err)
	}
	if len(c.Spec.Versions) != 1 {
		return "", nil, nil, errors.New("the CRD must have exactly one version")
	}
	v := c.Spec.Versions[0]
	schema, _ = v.Schema["openAPIV3Schema"].(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	if props["spec"] == nil || props["status"] == nil {
		return "", nil, nil, errors.New("the CRD schema has no spec or status")
	}
	return v.Name, v.AdditionalPrinterColumns, schema, nil
}

// xrdFor wraps the CRD's schema into the API's XRD. Crossplane adds its own
// fields (composition references, conditions) and its SYNCED, READY and AGE
// columns when it turns the XRD back into CRDs, so the schema keeps only
// spec and status.
func (a api) xrdFor(version string, columns []any, schema map[string]any) xrd {
	props, _ := schema["properties"].(map[string]any)
	description := schema["description"]
	if a.Description != "" {
		description = a.Description
	}
	return xrd{
		APIVersion: a.XRDAPIVersion,
		Kind:       "CompositeResourceDefinition",
		Metadata:   objectMeta{Name: a.xrdName()},
		Spec: xrdSpec{
			Group:                 a.Group,
			Scope:                 a.Scope,
			Names:                 a.Names,
			ClaimNames:            a.ClaimNames,
			DefaultCompositionRef: nameRef{Name: a.xrdName()},
			Versions: []xrdVersion{{
				Name:                     version,
				Served:                   true,
				Referenceable:            true,
				AdditionalPrinterColumns: columns,
				Schema: xrdSchema{OpenAPIV3Schema: map[string]any{
					"description": description,
					"type":        "object",
					"required":    []string{"spec"},
					"properties": map[string]any{
						"spec":   props["spec"],
						"status": props["status"],
					},
				}},
			}},
		},
	}
}

// composition is the pipeline Composition with one step: this function,
// with an Input that keeps every built-in default.
func (a api) composition(version string) composition {
	return composition{
		APIVersion: "apiextensions.crossplane.io/v1",
		Kind:       "Composition",
		Metadata: objectMeta{
			Name:   a.xrdName(),
			Labels: map[string]string{"inference.inferno.io/runtime": functionName},
		},
		Spec: compositionSpec{
			CompositeTypeRef: typeRef{APIVersion: a.Group + "/" + version, Kind: a.Names.Kind},
			Mode:             "Pipeline",
			Pipeline: []pipelineStep{{
				Step:        "render",
				FunctionRef: nameRef{Name: functionName},
				Input:       typeMeta{APIVersion: "fn.inferno.io/v1beta1", Kind: "Input"},
			}},
		},
	}
}

// configuration is the package metadata: the XRD and Composition beside it
// depend on the Function, which Crossplane installs (or finds installed
// from the same package source) before it establishes them.
func (a api) configuration() configuration {
	c := configuration{
		APIVersion: "meta.pkg.crossplane.io/v1",
		Kind:       "Configuration",
		Metadata: objectMeta{
			Name: a.PackageName,
			Annotations: map[string]string{
				"meta.crossplane.io/maintainer":  maintainer,
				"meta.crossplane.io/source":      source,
				"meta.crossplane.io/license":     "Apache-2.0",
				"meta.crossplane.io/description": a.PackageDescription,
			},
		},
	}
	c.Spec.Crossplane.Version = a.CrossplaneVersion
	c.Spec.DependsOn = []dependency{{APIVersion: "pkg.crossplane.io/v1", Kind: "Function", Package: functionPackage, Version: functionVersion}}
	return c
}
