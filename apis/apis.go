// Package apis holds the InferenceService API (apis/inference/v1alpha1) and
// what is generated from it: the CompositeResourceDefinition (xrd.yaml) and
// the Composition (composition.yaml). rbac.yaml, written by hand, lets
// Crossplane manage the kinds the function composes beyond its own role.
package apis

//go:generate ../bin/controller-gen object paths=./... paths=../input/...
//go:generate ../bin/controller-gen crd:crdVersions=v1 paths=../input/... output:crd:artifacts:config=../package/input
//go:generate go run ./generate -controller-gen=../bin/controller-gen -apis=./... -out=.
