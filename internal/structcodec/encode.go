package structcodec

import (
	"encoding/base64"
	"fmt"
	"math"
	"reflect"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The encoder. The standard path (apimachinery's converter to
// map[string]any, then structpb.NewStruct) builds every object twice, and
// was seven tenths of a serving-stage call's allocations
// (docs/performance.md). The encoder writes the protobuf values straight
// from the struct, from slabs, with what it needs of each type worked out
// once.
//
// It is exact: without Desired, an Encoder's Struct is, byte for byte,
// what the standard path makes of the same object — the same field names
// and inlining, omitempty and omitzero, nulls for nil pointers, maps and
// slices without omitempty, empty objects and lists where the object has
// them (an `emptyDir: {}` volume keeps its source), and every MarshalJSON
// or ToUnstructured method the converter calls. FuzzEncode holds it to
// that, and to the standard path less Desired's two fields with Desired.

// Encode encodes the object v points to into a protobuf Struct, as
// Encoder.Struct does. To encode several objects into one message, use an
// Encoder.
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
	// Desired leaves out what a desired object carries only because its
	// Go type has it, and what server-side apply would not apply anyway: a
	// top-level `status` that encodes to an empty object (`status: {}`).
	// See Struct. (An unset creationTimestamp needs nothing: the converter
	// already leaves out the zero metav1.Time, and so does the encoder.)
	Desired bool

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

func (e *Encoder) null() *structpb.Value {
	v := next(&e.values)
	v.Kind = nullKind
	return v
}

// nullKind is shared by every null: it holds nothing but the constant, and
// nothing writes to a oneof's wrapper once it is set.
var nullKind = &structpb.Value_NullValue{}

// Struct encodes the object v points to into a protobuf Struct, exactly as
// the standard path does (runtime.DefaultUnstructuredConverter.ToUnstructured,
// then structpb.NewStruct), but for what Desired leaves out; it fails where
// that fails. v is a non-nil pointer, or a runtime.Unstructured. The result
// shares no memory with v, but shares slabs with the Encoder's other
// results: they are garbage together.
//
// Why Desired changes nothing Crossplane applies: Crossplane server-side
// applies each desired object as the function returns it. For a kind with
// a status subresource (every composed kind here that has a status) the
// API server resets `status` on a write to the object itself, field
// ownership included, and for any kind an empty object sets no value; a
// function's desired objects never carry status, which is the observed
// object's. The composite's status, which the function does set, is not
// encoded with Desired.
func (e *Encoder) Struct(v any) (*structpb.Struct, error) {
	if u, ok := v.(runtime.Unstructured); ok {
		return structpb.NewStruct(u.UnstructuredContent())
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return nil, fmt.Errorf("%T does not encode to an object", v)
	}
	st := next(&e.structs)
	ct := typeOf(rv.Type().Elem())
	st.Fields = make(map[string]*structpb.Value, min(len(ct.fields), 8))
	if err := e.top(st, rv.Elem(), ct); err != nil {
		return nil, err
	}
	if e.Desired {
		if s := st.Fields["status"].GetStructValue(); s != nil && len(s.GetFields()) == 0 {
			delete(st.Fields, "status")
		}
	}
	return st, nil
}

// top fills st from the object itself, which the converter writes into
// the map it returns: a struct's fields, a map's entries, or nothing for a
// nil pointer or a custom conversion to null.
func (e *Encoder) top(st *structpb.Struct, v reflect.Value, ct *codecType) error {
	if ct.special != notSpecial || ct.custom {
		// Rare at the top, so always the converter's own way.
		u, err := ct.entry.ToUnstructured(v)
		if err != nil {
			return encodeError(ct.t, err.Error())
		}
		switch m := u.(type) {
		case nil:
			return nil
		case map[string]any:
			s, err := structpb.NewStruct(m)
			if err != nil {
				return encodeError(ct.t, err.Error())
			}
			st.Fields = s.Fields
			return nil
		}
		return fmt.Errorf("%s does not encode to an object", ct.t)
	}
	switch ct.kind {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		elem := ct.elem
		if ct.kind == reflect.Interface {
			elem = typeOf(v.Elem().Type())
		}
		return e.top(st, v.Elem(), elem)
	case reflect.Struct:
		return e.fields(st.Fields, v, ct)
	case reflect.Map:
		return e.entries(st.Fields, v, ct)
	}
	return fmt.Errorf("%s does not encode to an object", ct.t)
}

// value encodes v anywhere but directly in a struct field: in a list, a
// map, behind a pointer or an interface.
func (e *Encoder) value(v reflect.Value, ct *codecType) (*structpb.Value, error) {
	switch ct.special {
	case specialQuantity:
		// A copy: String caches its result in the Quantity, and the
		// object being encoded is not ours to write to.
		var q resource.Quantity
		if v.CanAddr() {
			q = *v.Addr().Interface().(*resource.Quantity)
		} else {
			q = v.Interface().(resource.Quantity)
		}
		return e.str(q.String()), nil
	case specialIntOrString:
		var is *intstr.IntOrString
		if v.CanAddr() {
			is = v.Addr().Interface().(*intstr.IntOrString)
		} else {
			c := v.Interface().(intstr.IntOrString)
			is = &c
		}
		switch {
		case is.Type == intstr.Int:
			return e.num(float64(is.IntVal)), nil
		case is.Type == intstr.String && utf8.ValidString(is.StrVal):
			return e.str(is.StrVal), nil
		}
		// MarshalJSON's own way: it mends invalid UTF-8 and refuses an
		// unknown Type.
		return e.custom(v, ct)
	case specialTime:
		t := v.Interface().(metav1.Time)
		if t.IsZero() {
			return e.null(), nil
		}
		return e.str(t.UTC().Format(time.RFC3339)), nil
	case specialMicroTime:
		t := v.Interface().(metav1.MicroTime)
		if t.IsZero() {
			return e.null(), nil
		}
		return e.str(t.UTC().Format(metav1.RFC3339Micro)), nil
	}
	if ct.custom {
		return e.custom(v, ct)
	}

	switch ct.kind {
	case reflect.Pointer:
		if v.IsNil() {
			return e.null(), nil
		}
		return e.value(v.Elem(), ct.elem)
	case reflect.Interface:
		if v.IsNil() {
			return e.null(), nil
		}
		return e.value(v.Elem(), typeOf(v.Elem().Type()))
	case reflect.Struct:
		fields := make(map[string]*structpb.Value, min(len(ct.fields), 8))
		if err := e.fields(fields, v, ct); err != nil {
			return nil, err
		}
		return e.object(fields), nil
	case reflect.Map:
		if v.IsNil() {
			return e.null(), nil
		}
		fields := make(map[string]*structpb.Value, v.Len())
		if err := e.entries(fields, v, ct); err != nil {
			return nil, err
		}
		return e.object(fields), nil
	case reflect.Slice:
		if v.IsNil() {
			return e.null(), nil
		}
		if ct.bytes {
			return e.str(base64.StdEncoding.EncodeToString(v.Bytes())), nil
		}
		values := make([]*structpb.Value, v.Len())
		for i := range values {
			ev, err := e.value(v.Index(i), ct.elem)
			if err != nil {
				return nil, err
			}
			values[i] = ev
		}
		return e.list(values), nil
	case reflect.String:
		return e.validStr(ct.t, v.String())
	case reflect.Bool:
		return e.boolean(v.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return e.num(float64(v.Int())), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if v.Uint() > math.MaxInt64 {
			return nil, encodeError(ct.t, fmt.Sprintf("%d is out of range for an int64", v.Uint()))
		}
		return e.num(float64(v.Uint())), nil
	case reflect.Float32, reflect.Float64:
		return e.num(v.Float()), nil
	}
	return nil, encodeError(ct.t, "the converter encodes no "+ct.kind.String())
}

// custom encodes a value through its own MarshalJSON or ToUnstructured,
// as the converter does.
func (e *Encoder) custom(v reflect.Value, ct *codecType) (*structpb.Value, error) {
	u, err := ct.entry.ToUnstructured(v)
	if err != nil {
		return nil, encodeError(ct.t, err.Error())
	}
	if u == nil {
		return e.null(), nil
	}
	pv, err := structpb.NewValue(u)
	if err != nil {
		return nil, encodeError(ct.t, err.Error())
	}
	return pv, nil
}

// fields adds a struct's fields to an object's, the converter's way: in
// field order (a later field of the same name wins), inlined fields into
// the same object.
func (e *Encoder) fields(out map[string]*structpb.Value, v reflect.Value, ct *codecType) error {
	if ct.badName != "" {
		return encodeError(ct.t, fmt.Sprintf("field name %q is not valid UTF-8", ct.badName))
	}
	for i := range ct.fields {
		f := &ct.fields[i]
		fv := v.Field(f.index)
		if f.omitEmpty && isEmpty(fv) {
			continue
		}
		if f.omitZero != nil && f.omitZero(fv) {
			continue
		}
		if f.inline {
			if err := e.inline(out, fv, f.typ); err != nil {
				return err
			}
			continue
		}
		if f.scalar {
			// Written as is, as the converter does, whatever methods
			// the type has.
			switch fv.Kind() {
			case reflect.String:
				sv, err := e.validStr(f.typ.t, fv.String())
				if err != nil {
					return err
				}
				out[f.name] = sv
			case reflect.Bool:
				out[f.name] = e.boolean(fv.Bool())
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				out[f.name] = e.num(float64(fv.Int()))
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				out[f.name] = e.num(float64(fv.Uint()))
			default:
				out[f.name] = e.num(fv.Float())
			}
			continue
		}
		if !f.exported {
			// The converter reads these too, but reflection cannot hand
			// their values to a MarshalJSON; API types have none.
			return encodeError(ct.t, "field "+f.name+" is unexported")
		}
		ev, err := e.value(fv, f.typ)
		if err != nil {
			return err
		}
		out[f.name] = ev
	}
	return nil
}

// inline adds an embedded struct's fields, or a nil pointer's none.
func (e *Encoder) inline(out map[string]*structpb.Value, v reflect.Value, ct *codecType) error {
	switch {
	case ct.custom || ct.special != notSpecial:
	case ct.kind == reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return e.inline(out, v.Elem(), ct.elem)
	case ct.kind == reflect.Struct:
		return e.fields(out, v, ct)
	}
	return encodeError(ct.t, "only structs and pointers to them can be inlined")
}

// entries adds a map's entries to an object's.
func (e *Encoder) entries(out map[string]*structpb.Value, v reflect.Value, ct *codecType) error {
	if !ct.keysOK {
		return encodeError(ct.t, "keys are not strings")
	}
	// One key and one value for the whole map, set from the iterator in
	// turn: MapIter.Key and Value would allocate a copy of each, some 140
	// allocations a serving-stage call. Nothing keeps them past its turn:
	// e.value copies what it encodes (strings are immutable).
	key := reflect.New(v.Type().Key()).Elem()
	val := reflect.New(v.Type().Elem()).Elem()
	it := v.MapRange()
	for it.Next() {
		key.SetIterKey(it)
		val.SetIterValue(it)
		k := key.String()
		if !utf8.ValidString(k) {
			return encodeError(ct.t, fmt.Sprintf("key %q is not valid UTF-8", k))
		}
		ev, err := e.value(val, ct.elem)
		if err != nil {
			return err
		}
		out[k] = ev
	}
	return nil
}

// validStr is a string value, which protobuf requires to be valid UTF-8.
func (e *Encoder) validStr(t reflect.Type, s string) (*structpb.Value, error) {
	if !utf8.ValidString(s) {
		return nil, encodeError(t, fmt.Sprintf("%q is not valid UTF-8", s))
	}
	return e.str(s), nil
}

// encodeError is every encoding error: the standard path fails on the same
// objects, with messages of its own. None reaches a user but as a bug.
func encodeError(t reflect.Type, why string) error {
	return fmt.Errorf("cannot encode %s: %s", t, why)
}
