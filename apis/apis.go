// Package apis holds the InferenceService API (apis/inference/v1alpha1) and
// what is generated from it: the LegacyCluster CompositeResourceDefinition
// with the InferenceService claim (xrd.yaml), its Composition
// (composition.yaml) and Configuration package (crossplane.yaml), and in
// namespaced/ the same for Crossplane v2's namespaced composite. rbac.yaml,
// written by hand, lets Crossplane manage the kinds the function composes
// beyond its own role; it is not part of any package.
//
// `make generate` regenerates everything here, and docs/api, from the Go
// types.
package apis
