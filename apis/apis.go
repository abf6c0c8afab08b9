// Package apis holds the InferenceService API (apis/inference/v1alpha1) and
// what is generated from it: the CompositeResourceDefinition (xrd.yaml) and
// the Composition (composition.yaml). rbac.yaml, written by hand, lets
// Crossplane manage the kinds the function composes beyond its own role.
//
// `make generate` regenerates everything here from the Go types.
package apis
