package structcodec

import (
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/runtime"
)

// The standard path, which the SDK's helpers take: structpb.AsMap, then
// apimachinery's converter, and back. FuzzDecode and FuzzEncode hold the
// codec to it, and `make bench-codec` builds the function with it in the
// decoder's place to measure what the decoder buys.

// standardStruct encodes an object the standard way.
func standardStruct(v any) (*structpb.Struct, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(v)
	if err != nil {
		return nil, fmt.Errorf("cannot encode %T: %v", v, err)
	}
	return structpb.NewStruct(m)
}

// decodeStandard decodes a value the standard way. Its errors name no
// field path: it is a reference and a benchmark, not what refuses claims.
func decodeStandard(v *structpb.Value, into any) error {
	m, ok := v.AsInterface().(map[string]any)
	if !ok {
		return fmt.Errorf("cannot decode into %T", into)
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(m, into)
}
