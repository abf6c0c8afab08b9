package fn

import (
	"github.com/crossplane/function-sdk-go/resource/composed"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// toComposed converts a typed object, whose TypeMeta the builders set, into
// unstructured content for the response: the one place where typed objects
// leave the function.
//
// The converter writes zero values of non-pointer structs as empty objects
// and unset pointers as nulls (metadata.creationTimestamp: null, status: {},
// resources: {}). Crossplane applies composed objects with server-side
// apply, which reads every field present as an opinion of the function, so
// both are pruned. No object the function builds means anything by an
// empty object: its emptyDir volumes all carry a size limit.
func toComposed(obj runtime.Object) (*composed.Unstructured, error) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	prune(content)
	return &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: content}}, nil
}

// prune removes nulls and empty objects and lists from m, deepest first, and
// reports whether m itself ended up empty.
func prune(m map[string]any) bool {
	for k, v := range m {
		if empty(v) {
			delete(m, k)
		}
	}
	return len(m) == 0
}

func empty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case map[string]any:
		return prune(t)
	case []any:
		for _, e := range t {
			if m, ok := e.(map[string]any); ok {
				prune(m)
			}
		}
		return len(t) == 0
	}
	return false
}
