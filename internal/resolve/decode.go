package resolve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
	"github.com/inferno-ai/function-inferno/internal/structcodec"
	"google.golang.org/protobuf/types/known/structpb"
)

// DecodeComposite decodes the observed XR into its API type, an
// XInferenceService or an XModelCache. A value of the wrong type is
// reported with its field path.
func DecodeComposite[T any](obj *structpb.Struct) (*T, error) {
	if obj == nil {
		return nil, errors.New("the request carries no observed composite resource")
	}
	xr := new(T)
	if err := structcodec.Decode(obj, xr, ""); err != nil {
		return nil, err
	}
	return xr, nil
}

// DecodeXR decodes an observed InferenceService.
func DecodeXR(obj *structpb.Struct) (*v1alpha1.XInferenceService, error) {
	return DecodeComposite[v1alpha1.XInferenceService](obj)
}

// DecodeInput decodes the Composition's Input strictly, so that a
// misspelt field is refused rather than silently ignored, with errors that
// name the field and always read the same.
func DecodeInput(input *structpb.Struct) (*v1beta1.Input, error) {
	in := &v1beta1.Input{}
	if input == nil {
		return in, nil
	}
	b, err := json.Marshal(input.AsMap())
	if err != nil {
		return nil, fmt.Errorf("input: cannot encode the Composition's function Input: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(in); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, fmt.Errorf("input.%s: must be %s, not %s; check the Composition's function Input against its schema", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
		}
		return nil, fmt.Errorf("input: the Composition's function Input is invalid: %s; check the Composition's function Input against its schema", strings.TrimPrefix(err.Error(), "json: "))
	}
	return in, nil
}

func jsonKind(goKind string) string {
	switch goKind {
	case "int32", "int64", "int":
		return "an integer"
	case "bool":
		return "true or false"
	case "string":
		return "a string"
	case "slice":
		return "a list"
	default:
		return "an object"
	}
}
