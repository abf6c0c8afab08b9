package structcodec

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// A codecType is what the decoder knows about one Go type, worked out
// once: how apimachinery's converter treats it, and the codecTypes of its
// elements and fields, so that walking a value looks nothing up.
type codecType struct {
	t    reflect.Type
	kind reflect.Kind

	// special is a type whose JSON form is not its Go shape and which the
	// decoder reads itself, as its UnmarshalJSON would.
	special special
	// unmarshaler: *t has an UnmarshalJSON, which decoding goes through.
	unmarshaler bool

	elem   *codecType // of a pointer, slice or map
	bytes  bool       // a slice of bytes, which is a base64 string
	fields []field    // of a struct
}

type special uint8

const (
	notSpecial special = iota
	specialQuantity
	specialIntOrString
	specialTime
	specialMicroTime
)

// field is one struct field as apimachinery's converter sees it
// (runtime.fieldInfoFromField): named by its json tag or, without one, by
// the Go field name; inlined when it is anonymous and untagged or tagged
// with an empty name; skipped when named "-".
type field struct {
	name     string
	index    int
	inline   bool
	exported bool
	typ      *codecType
}

var (
	typeQuantity  = reflect.TypeFor[resource.Quantity]()
	typeIntStr    = reflect.TypeFor[intstr.IntOrString]()
	typeTime      = reflect.TypeFor[metav1.Time]()
	typeMicroTime = reflect.TypeFor[metav1.MicroTime]()
	unmarshalerOf = reflect.TypeFor[json.Unmarshaler]()

	typeObjectMeta = reflect.TypeFor[metav1.ObjectMeta]()
)

// codecTypes caches each type's codecType. Like encoding/json's own cache
// it only memoises what reflection says about a type; it holds no request
// data. Types are built under buildMu and published complete, so a reader
// never sees a half-built one.
var (
	codecTypes sync.Map // reflect.Type → *codecType
	buildMu    sync.Mutex
)

func typeOf(t reflect.Type) *codecType {
	if ct, ok := codecTypes.Load(t); ok {
		return ct.(*codecType)
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	building := map[reflect.Type]*codecType{}
	ct := build(t, building)
	for bt, b := range building {
		codecTypes.Store(bt, b)
	}
	return ct
}

// build makes t's codecType and those it refers to; building holds the
// ones under construction, so that recursive types end.
func build(t reflect.Type, building map[reflect.Type]*codecType) *codecType {
	if ct, ok := codecTypes.Load(t); ok {
		return ct.(*codecType)
	}
	if ct, ok := building[t]; ok {
		return ct
	}
	ct := &codecType{t: t, kind: t.Kind()}
	building[t] = ct
	switch t {
	case typeQuantity:
		ct.special = specialQuantity
	case typeIntStr:
		ct.special = specialIntOrString
	case typeTime:
		ct.special = specialTime
	case typeMicroTime:
		ct.special = specialMicroTime
	}
	ct.unmarshaler = reflect.PointerTo(t).Implements(unmarshalerOf)

	switch t.Kind() {
	case reflect.Pointer:
		ct.elem = build(t.Elem(), building)
	case reflect.Slice:
		ct.bytes = t.Elem().Kind() == reflect.Uint8
		ct.elem = build(t.Elem(), building)
	case reflect.Map:
		ct.elem = build(t.Elem(), building)
	case reflect.Struct:
		for i := range t.NumField() {
			sf := t.Field(i)
			f := field{index: i, exported: sf.IsExported()}
			tag := sf.Tag.Get("json")
			f.name, _, _ = strings.Cut(tag, ",")
			if f.name == "" && !sf.Anonymous {
				f.name = sf.Name
			}
			if f.name == "-" {
				continue
			}
			f.inline = f.name == ""
			f.typ = build(sf.Type, building)
			ct.fields = append(ct.fields, f)
		}
	}
	return ct
}
