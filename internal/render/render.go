package render

import (
	"k8s.io/apimachinery/pkg/runtime"
)

// Resource is one desired composed object and its readiness.
type Resource struct {
	Name   string
	Object runtime.Object
	Ready  bool
}
