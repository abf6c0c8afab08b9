// Package structcodec converts between protobuf Structs, the form in which
// Crossplane sends observed objects to a composition function and takes
// desired ones back, and Go API structs.
//
// The SDK's helpers go through map[string]any (structpb.AsMap, then
// apimachinery's converter): a full copy of every object, and errors that
// name no field. This decoder walks the protobuf value and the struct side
// by side, with what it needs of each type worked out once; follows the
// converter's field rules (json names, inlining) and every type's
// UnmarshalJSON; and names the field path in every error, which is what a
// refused claim's message shows its author. FuzzDecode holds it to the
// converter on every observed and rendered example object.
//
// The Encoder goes the other way, struct to protobuf, without the
// standard path's map[string]any in between, byte for byte as the standard
// path encodes (FuzzEncode holds it to that). It was dropped once, when it
// bought 10–14% over gRPC; issue 23's allocation budget brought it back
// (docs/performance.md).
package structcodec

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Decode decodes a protobuf Struct into the struct into points to.
// Fields the type does not have are ignored, as the API server's decoder
// ignores them, and so is metadata.managedFields, which is large and which
// a function has no use for. A value of the wrong type is a *PathError
// naming its field path, prefixed with prefix (e.g. "spec" when s is an
// object's spec; "" for a whole object).
func Decode(s *structpb.Struct, into any, prefix string) error {
	return DecodeValue(structpb.NewStructValue(s), into, prefix)
}

// DecodeValue decodes a protobuf Value into what into points to, by the
// same rules as Decode. path is the value's field path, the prefix of
// every error's (e.g. "spec.template").
func DecodeValue(v *structpb.Value, into any, path string) error {
	rv := reflect.ValueOf(into)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("cannot decode into %T", into)
	}
	if standardDecode {
		return decodeStandard(v, into)
	}
	return decodeValue(v, rv.Elem(), typeOf(rv.Type().Elem()), &fieldPath{name: path, index: -1})
}

// fieldPath is where the decoder is, built into a string only for an
// error: formatting every path eagerly cost a tenth of the allocations.
type fieldPath struct {
	parent *fieldPath
	name   string // a field, or "" for a list element
	index  int    // a list index, or -1 for a field
}

// String is the path as the user writes it, e.g.
// "spec.containers[1].name"; "" at the root.
func (p *fieldPath) String() string {
	if p == nil {
		return ""
	}
	prefix := p.parent.String()
	switch {
	case p.index >= 0:
		return prefix + "[" + strconv.Itoa(p.index) + "]"
	case prefix == "":
		return p.name
	case p.name == "":
		return prefix
	default:
		return prefix + "." + p.name
	}
}

// A PathError is a decoding error at a field path, such as a string where
// an integer belongs. Its message is meant for the user who wrote the
// object, so it says what the value must be and what it was.
type PathError struct {
	// Path is the field path, e.g. "spec.replicas" or
	// "spec.template.spec.containers[1].name"; "" for the value itself.
	Path string
	// Msg says what is wrong, e.g. `must be an integer, not the string "two"`.
	Msg string
}

// Error is "<path>: <msg>", or the message alone for an empty path.
func (e *PathError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

func typeErr(path *fieldPath, want string, got *structpb.Value) error {
	return &PathError{Path: path.String(), Msg: fmt.Sprintf("must be %s, not %s", want, describe(got))}
}

func describe(v *structpb.Value) string {
	switch k := v.GetKind().(type) {
	case *structpb.Value_StringValue:
		return fmt.Sprintf("the string %q", truncate(k.StringValue, 40))
	case *structpb.Value_NumberValue:
		return "the number " + strconv.FormatFloat(k.NumberValue, 'g', -1, 64)
	case *structpb.Value_BoolValue:
		return "a boolean"
	case *structpb.Value_StructValue:
		return "an object"
	case *structpb.Value_ListValue:
		return "a list"
	}
	return "null"
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// decodeValue decodes src into dst, whose codecType is ct.
func decodeValue(src *structpb.Value, dst reflect.Value, ct *codecType, path *fieldPath) error {
	if _, null := src.GetKind().(*structpb.Value_NullValue); null || src.GetKind() == nil {
		return nil
	}
	switch ct.special {
	case specialQuantity:
		var q resource.Quantity
		var err error
		switch k := src.GetKind().(type) {
		case *structpb.Value_StringValue:
			// Spaces around are allowed, as Quantity's UnmarshalJSON
			// allows them.
			q, err = resource.ParseQuantity(strings.TrimSpace(k.StringValue))
		case *structpb.Value_NumberValue:
			q, err = resource.ParseQuantity(strconv.FormatFloat(k.NumberValue, 'f', -1, 64))
		default:
			return typeErr(path, `a quantity such as "4" or "16Gi"`, src)
		}
		if err != nil {
			return &PathError{Path: path.String(), Msg: fmt.Sprintf("%s is not a quantity; write it like \"500m\", \"4\" or \"16Gi\"", describe(src))}
		}
		dst.Set(reflect.ValueOf(q))
		return nil
	case specialIntOrString:
		switch k := src.GetKind().(type) {
		case *structpb.Value_StringValue:
			dst.Set(reflect.ValueOf(intstr.FromString(k.StringValue)))
		case *structpb.Value_NumberValue:
			n, err := toInt(k.NumberValue, path, 32)
			if err != nil {
				return err
			}
			dst.Set(reflect.ValueOf(intstr.FromInt32(int32(n))))
		default:
			return typeErr(path, "an integer or a string", src)
		}
		return nil
	case specialTime, specialMicroTime:
		str, ok := src.GetKind().(*structpb.Value_StringValue)
		if !ok {
			return typeErr(path, "a timestamp", src)
		}
		t, err := time.Parse(time.RFC3339Nano, str.StringValue)
		if err != nil {
			return &PathError{Path: path.String(), Msg: fmt.Sprintf("%s is not an RFC 3339 timestamp", describe(src))}
		}
		if ct.special == specialTime {
			dst.Set(reflect.ValueOf(metav1.NewTime(t)))
		} else {
			dst.Set(reflect.ValueOf(metav1.NewMicroTime(t)))
		}
		return nil
	}
	if ct.bytes {
		str, ok := src.GetKind().(*structpb.Value_StringValue)
		if !ok {
			return typeErr(path, "a base64 string", src)
		}
		b, err := base64.StdEncoding.DecodeString(str.StringValue)
		if err != nil {
			return &PathError{Path: path.String(), Msg: "is not valid base64"}
		}
		dst.SetBytes(b)
		return nil
	}
	if ct.unmarshaler && (ct.kind == reflect.Struct || ct.kind == reflect.Map || ct.kind == reflect.Slice) {
		// A type with an UnmarshalJSON of its own, as apimachinery's
		// converter decodes it.
		return decodeJSON(src, dst, path)
	}

	switch ct.kind {
	case reflect.Pointer:
		elem := reflect.New(dst.Type().Elem())
		if err := decodeValue(src, elem.Elem(), ct.elem, path); err != nil {
			return err
		}
		dst.Set(elem)
		return nil
	case reflect.Struct:
		obj := src.GetStructValue()
		if obj == nil {
			return typeErr(path, "an object", src)
		}
		return decodeFields(obj, dst, ct, path)
	case reflect.Map:
		obj := src.GetStructValue()
		if obj == nil {
			return typeErr(path, "an object", src)
		}
		m := reflect.MakeMapWithSize(dst.Type(), len(obj.GetFields()))
		// Decode keys in order, so that the first error is always the same.
		keys := make([]string, 0, len(obj.GetFields()))
		for k := range obj.GetFields() {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		// One key and one value for the whole map: SetMapIndex copies
		// both into the map, so each entry is decoded into the zeroed
		// value in turn rather than into a new one.
		ev := reflect.New(dst.Type().Elem()).Elem()
		kv := reflect.New(dst.Type().Key()).Elem()
		for _, k := range keys {
			ev.SetZero()
			if err := decodeValue(obj.GetFields()[k], ev, ct.elem, &fieldPath{parent: path, name: k, index: -1}); err != nil {
				return err
			}
			if kv.Kind() == reflect.String {
				kv.SetString(k)
			} else {
				kv = reflect.ValueOf(k).Convert(dst.Type().Key())
			}
			m.SetMapIndex(kv, ev)
		}
		dst.Set(m)
		return nil
	case reflect.Slice:
		list := src.GetListValue()
		if list == nil {
			return typeErr(path, "a list", src)
		}
		s := reflect.MakeSlice(dst.Type(), len(list.GetValues()), len(list.GetValues()))
		for i, ev := range list.GetValues() {
			if err := decodeValue(ev, s.Index(i), ct.elem, &fieldPath{parent: path, index: i}); err != nil {
				return err
			}
		}
		dst.Set(s)
		return nil
	case reflect.String:
		str, ok := src.GetKind().(*structpb.Value_StringValue)
		if !ok {
			return typeErr(path, "a string", src)
		}
		dst.SetString(str.StringValue)
		return nil
	case reflect.Bool:
		b, ok := src.GetKind().(*structpb.Value_BoolValue)
		if !ok {
			return typeErr(path, "true or false", src)
		}
		dst.SetBool(b.BoolValue)
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		num, ok := src.GetKind().(*structpb.Value_NumberValue)
		if !ok {
			return typeErr(path, "an integer", src)
		}
		n, err := toInt(num.NumberValue, path, dst.Type().Bits())
		if err != nil {
			return err
		}
		dst.SetInt(n)
		return nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		num, ok := src.GetKind().(*structpb.Value_NumberValue)
		if !ok || num.NumberValue < 0 || num.NumberValue != math.Trunc(num.NumberValue) || num.NumberValue > math.Ldexp(1, dst.Type().Bits())-1 {
			return typeErr(path, "a non-negative integer", src)
		}
		dst.SetUint(uint64(num.NumberValue))
		return nil
	case reflect.Float32, reflect.Float64:
		num, ok := src.GetKind().(*structpb.Value_NumberValue)
		if !ok {
			return typeErr(path, "a number", src)
		}
		dst.SetFloat(num.NumberValue)
		return nil
	case reflect.Interface:
		if dst.NumMethod() == 0 {
			dst.Set(reflect.ValueOf(src.AsInterface()))
			return nil
		}
	}
	// Anything else decodes the way encoding/json would: rare and slow.
	return decodeJSON(src, dst, path)
}

// decodeFields decodes an object into a struct's fields, by the
// converter's field rules: an inlined field takes its fields from the same
// object.
func decodeFields(obj *structpb.Struct, dst reflect.Value, ct *codecType, path *fieldPath) error {
	for i := range ct.fields {
		f := &ct.fields[i]
		fv := dst.Field(f.index)
		if f.inline {
			switch {
			case f.typ.kind == reflect.Struct:
				if err := decodeFields(obj, fv, f.typ, path); err != nil {
					return err
				}
			case f.typ.kind == reflect.Pointer && f.typ.elem.kind == reflect.Struct && fv.CanSet():
				// The converter allocates an inlined pointer always.
				elem := reflect.New(f.typ.elem.t)
				if err := decodeFields(obj, elem.Elem(), f.typ.elem, path); err != nil {
					return err
				}
				fv.Set(elem)
			}
			continue
		}
		if !f.exported {
			continue
		}
		v, ok := obj.GetFields()[f.name]
		if !ok {
			continue
		}
		if f.name == "managedFields" && ct.t == typeObjectMeta {
			// Large, opaque, and never read by the function.
			continue
		}
		if err := decodeValue(v, fv, f.typ, &fieldPath{parent: path, name: f.name, index: -1}); err != nil {
			return err
		}
	}
	return nil
}

// decodeJSON decodes src through encoding/json, into dst's UnmarshalJSON
// if it has one.
func decodeJSON(src *structpb.Value, dst reflect.Value, path *fieldPath) error {
	b, err := json.Marshal(src.AsInterface())
	if err != nil {
		return &PathError{Path: path.String(), Msg: err.Error()}
	}
	if err := json.Unmarshal(b, dst.Addr().Interface()); err != nil {
		return &PathError{Path: path.String(), Msg: strings.TrimPrefix(err.Error(), "json: ")}
	}
	return nil
}

// toInt converts a JSON number to an integer of the given bits, or says
// why it cannot.
func toInt(f float64, path *fieldPath, bits int) (int64, error) {
	if f != math.Trunc(f) || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, &PathError{Path: path.String(), Msg: fmt.Sprintf("must be an integer, not %s", strconv.FormatFloat(f, 'g', -1, 64))}
	}
	limit := math.Ldexp(1, bits-1)
	if f < -limit || f >= limit {
		return 0, &PathError{Path: path.String(), Msg: fmt.Sprintf("%s is out of range for a %d-bit integer", strconv.FormatFloat(f, 'g', -1, 64), bits)}
	}
	return int64(f), nil
}
