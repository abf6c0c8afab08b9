// Package structcodec converts between Go API structs and protobuf Structs,
// the form in which Crossplane sends observed objects to a composition
// function and takes desired ones back.
//
// The SDK's helpers go through map[string]any (structpb.AsMap, then the
// apimachinery converter, and back): two full copies of every object in
// both directions, which profiling showed to be most of a call's time. This
// codec walks the struct and the protobuf value side by side instead, with
// the field layout of each type worked out once. It follows encoding/json's
// rules (json tags, inline embedding, omitempty), knows the apimachinery
// types whose JSON form is not their Go shape (Quantity, IntOrString, Time,
// MicroTime, []byte), drops nulls and empty objects and lists as
// server-side apply needs, and names the field path in every decoding
// error.
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
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Encode encodes a struct (or pointer to one) into a protobuf Struct. To
// encode several objects into one message, use an Encoder.
func Encode(v any) (*structpb.Struct, error) {
	return (&Encoder{}).Struct(v)
}

// An Encoder encodes structs into protobuf Structs, handing out the
// protobuf values from slabs: a rendered Deployment is some five hundred
// small protobuf messages, and allocating them one by one was a third of a
// function call's time. Use one Encoder for all the objects of one
// response, so they share slabs. The zero value is ready to use; an
// Encoder is not safe for concurrent use.
type Encoder struct {
	values  []structpb.Value
	strings []structpb.Value_StringValue
	numbers []structpb.Value_NumberValue
	bools   []structpb.Value_BoolValue
	objects []structpb.Value_StructValue
	lists   []structpb.Value_ListValue
	structs []structpb.Struct
}

const slab = 64

func next[T any](s *[]T) *T {
	if len(*s) == 0 {
		*s = make([]T, slab)
	}
	p := &(*s)[0]
	*s = (*s)[1:]
	return p
}

func (e *Encoder) str(s string) *structpb.Value {
	k := next(&e.strings)
	k.StringValue = s
	v := next(&e.values)
	v.Kind = k
	return v
}

func (e *Encoder) num(n float64) *structpb.Value {
	k := next(&e.numbers)
	k.NumberValue = n
	v := next(&e.values)
	v.Kind = k
	return v
}

func (e *Encoder) boolean(b bool) *structpb.Value {
	k := next(&e.bools)
	k.BoolValue = b
	v := next(&e.values)
	v.Kind = k
	return v
}

func (e *Encoder) object(fields map[string]*structpb.Value) *structpb.Value {
	st := next(&e.structs)
	st.Fields = fields
	k := next(&e.objects)
	k.StructValue = st
	v := next(&e.values)
	v.Kind = k
	return v
}

func (e *Encoder) list(values []*structpb.Value) *structpb.Value {
	k := next(&e.lists)
	k.ListValue = &structpb.ListValue{Values: values}
	v := next(&e.values)
	v.Kind = k
	return v
}

// Struct encodes a struct (or pointer to one) into a protobuf Struct.
// Nulls and empty objects and lists are left out (a list keeps an empty
// element, as an empty object, so that the others keep their indexes).
// The result shares no memory with v, but shares slabs with the Encoder's
// other results: they are garbage together.
func (e *Encoder) Struct(v any) (*structpb.Struct, error) {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		rv = rv.Elem()
	}
	val, err := e.encodeValue(rv)
	if err != nil {
		return nil, err
	}
	if val == nil {
		return &structpb.Struct{Fields: map[string]*structpb.Value{}}, nil
	}
	s := val.GetStructValue()
	if s == nil {
		return nil, fmt.Errorf("%s does not encode to an object", rv.Type())
	}
	return s, nil
}

var (
	typeQuantity = reflect.TypeFor[resource.Quantity]()
	typeIntStr   = reflect.TypeFor[intstr.IntOrString]()
	typeTime     = reflect.TypeFor[metav1.Time]()
	typeMicro    = reflect.TypeFor[metav1.MicroTime]()
	typeBytes    = reflect.TypeFor[[]byte]()

	typeObjectMeta = reflect.TypeFor[metav1.ObjectMeta]()
)

// encodeValue returns nil for a value that is omitted: null, or an object
// or list that ends up empty.
func (e *Encoder) encodeValue(v reflect.Value) (*structpb.Value, error) {
	switch v.Type() {
	case typeQuantity:
		q := v.Interface().(resource.Quantity)
		return e.str(q.String()), nil
	case typeIntStr:
		is := v.Interface().(intstr.IntOrString)
		if is.Type == intstr.String {
			return e.str(is.StrVal), nil
		}
		return e.num(float64(is.IntVal)), nil
	case typeTime:
		t := v.Interface().(metav1.Time)
		if t.IsZero() {
			return nil, nil
		}
		return e.str(t.UTC().Format(time.RFC3339)), nil
	case typeMicro:
		t := v.Interface().(metav1.MicroTime)
		if t.IsZero() {
			return nil, nil
		}
		return e.str(t.UTC().Format(metav1.RFC3339Micro)), nil
	case typeBytes:
		if v.IsNil() {
			return nil, nil
		}
		return e.str(base64.StdEncoding.EncodeToString(v.Bytes())), nil
	}

	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil, nil
		}
		return e.encodeValue(v.Elem())
	case reflect.Struct:
		return e.encodeObject(v)
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return nil, fmt.Errorf("cannot encode %s: keys are not strings", v.Type())
		}
		fields := make(map[string]*structpb.Value, v.Len())
		it := v.MapRange()
		for it.Next() {
			ev, err := e.encodeValue(it.Value())
			if err != nil {
				return nil, err
			}
			if ev != nil {
				fields[it.Key().String()] = ev
			}
		}
		if len(fields) == 0 {
			return nil, nil
		}
		return e.object(fields), nil
	case reflect.Slice, reflect.Array:
		values := make([]*structpb.Value, 0, v.Len())
		for i := range v.Len() {
			ev, err := e.encodeValue(v.Index(i))
			if err != nil {
				return nil, err
			}
			if ev == nil {
				// A list keeps its length: an empty element stays an
				// empty object rather than shifting the others.
				ev = e.object(nil)
			}
			values = append(values, ev)
		}
		if len(values) == 0 {
			return nil, nil
		}
		return e.list(values), nil
	case reflect.String:
		return e.str(v.String()), nil
	case reflect.Bool:
		return e.boolean(v.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return e.num(float64(v.Int())), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return e.num(float64(v.Uint())), nil
	case reflect.Float32, reflect.Float64:
		return e.num(v.Float()), nil
	}
	return nil, fmt.Errorf("cannot encode a value of type %s", v.Type())
}

func (e *Encoder) encodeObject(v reflect.Value) (*structpb.Value, error) {
	fields := map[string]*structpb.Value{}
	for _, f := range fieldsOf(v.Type()) {
		fv := v.FieldByIndex(f.index)
		if f.omitEmpty && isEmptyValue(fv) {
			continue
		}
		ev, err := e.encodeValue(fv)
		if err != nil {
			return nil, err
		}
		if ev != nil {
			fields[f.name] = ev
		}
	}
	if len(fields) == 0 {
		return nil, nil
	}
	return e.object(fields), nil
}

// isEmptyValue is encoding/json's definition of empty, for omitempty.
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}

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
	return decodeValue(v, rv.Elem(), &fieldPath{name: path, index: -1})
}

// fieldPath is where the decoder is, built into a string only for an
// error: formatting every path eagerly cost a tenth of the allocations.
type fieldPath struct {
	parent *fieldPath
	name   string // a field, or "" for a list element
	index  int    // a list index, or -1 for a field
}

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

func decodeValue(src *structpb.Value, dst reflect.Value, path *fieldPath) error {
	if _, null := src.GetKind().(*structpb.Value_NullValue); null || src.GetKind() == nil {
		return nil
	}
	switch dst.Type() {
	case typeQuantity:
		var q resource.Quantity
		var err error
		switch k := src.GetKind().(type) {
		case *structpb.Value_StringValue:
			q, err = resource.ParseQuantity(k.StringValue)
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
	case typeIntStr:
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
	case typeTime, typeMicro:
		str, ok := src.GetKind().(*structpb.Value_StringValue)
		if !ok {
			return typeErr(path, "a timestamp", src)
		}
		t, err := time.Parse(time.RFC3339Nano, str.StringValue)
		if err != nil {
			return &PathError{Path: path.String(), Msg: fmt.Sprintf("%s is not an RFC 3339 timestamp", describe(src))}
		}
		if dst.Type() == typeTime {
			dst.Set(reflect.ValueOf(metav1.NewTime(t)))
		} else {
			dst.Set(reflect.ValueOf(metav1.NewMicroTime(t)))
		}
		return nil
	case typeBytes:
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

	switch dst.Kind() {
	case reflect.Pointer:
		elem := reflect.New(dst.Type().Elem())
		if err := decodeValue(src, elem.Elem(), path); err != nil {
			return err
		}
		dst.Set(elem)
		return nil
	case reflect.Struct:
		obj := src.GetStructValue()
		if obj == nil {
			return typeErr(path, "an object", src)
		}
		for _, f := range fieldsOf(dst.Type()) {
			fv, ok := obj.GetFields()[f.name]
			if !ok {
				continue
			}
			if f.name == "managedFields" && dst.Type() == typeObjectMeta {
				// Large, opaque, and never read by the function.
				continue
			}
			if err := decodeValue(fv, dst.FieldByIndex(f.index), &fieldPath{parent: path, name: f.name, index: -1}); err != nil {
				return err
			}
		}
		return nil
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
		for _, k := range keys {
			ev := reflect.New(dst.Type().Elem()).Elem()
			if err := decodeValue(obj.GetFields()[k], ev, &fieldPath{parent: path, name: k, index: -1}); err != nil {
				return err
			}
			m.SetMapIndex(reflect.ValueOf(k).Convert(dst.Type().Key()), ev)
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
			if err := decodeValue(ev, s.Index(i), &fieldPath{parent: path, index: i}); err != nil {
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

// field is one JSON field of a struct type.
type field struct {
	name      string
	index     []int
	omitEmpty bool
}

// fieldLayouts caches each struct type's JSON fields. Like encoding/json's
// own cache it only memoises what reflection says about a type; it holds no
// request data.
var fieldLayouts sync.Map // reflect.Type → []field

func fieldsOf(t reflect.Type) []field {
	if fs, ok := fieldLayouts.Load(t); ok {
		return fs.([]field)
	}
	fs := collectFields(t, nil)
	fieldLayouts.Store(t, fs)
	return fs
}

func collectFields(t reflect.Type, index []int) []field {
	var out []field
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" || (!sf.IsExported() && !sf.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		idx := append(append([]int(nil), index...), i)
		if sf.Anonymous && name == "" && sf.Type.Kind() == reflect.Struct {
			out = append(out, collectFields(sf.Type, idx)...)
			continue
		}
		if strings.Contains(opts, "inline") && sf.Type.Kind() == reflect.Struct {
			out = append(out, collectFields(sf.Type, idx)...)
			continue
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		out = append(out, field{name: name, index: idx, omitEmpty: strings.Contains(opts, "omitempty")})
	}
	return out
}
