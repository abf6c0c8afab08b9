package structcodec

import (
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/runtime"
)

// The standard path, which the SDK's helpers take: apimachinery's
// converter to map[string]any, then structpb. The codec is held to it (its
// tests and FuzzEncode compare the two byte for byte), and `make
// bench-codec` builds the function with it in the codec's place
// (-ldflags -X …standardPaths=encode,decode) to measure what the codec buys.

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
