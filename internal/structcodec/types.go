package structcodec

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// A codecType is what the codec knows about one Go type, worked out once:
// how apimachinery's converter treats it, and the codecTypes of its
// elements and fields, so that walking a value looks nothing up.
type codecType struct {
	t    reflect.Type
	kind reflect.Kind

	// special is a type whose JSON form is not its Go shape and which the
	// codec reads and writes itself, as its UnmarshalJSON and MarshalJSON
	// would.
	special special
	// custom is any other type with a MarshalJSON or ToUnstructured: the
	// converter calls it, and so does the encoder, through entry.
	custom bool
	entry  *value.TypeReflectCacheEntry
	// unmarshaler: *t has an UnmarshalJSON, which decoding goes through.
	unmarshaler bool

	elem    *codecType // of a pointer, slice or map
	bytes   bool       // a slice of bytes, which is a base64 string
	keysOK  bool       // a map whose keys are strings
	fields  []field    // of a struct
	badName string     // a struct field name that is not valid UTF-8
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
// with an empty name; skipped when named "-". Unlike encoding/json the
// converter does not skip unexported fields, and neither does the encoder.
type field struct {
	name      string
	index     int
	inline    bool
	exported  bool
	omitEmpty bool
	omitZero  func(reflect.Value) bool
	// scalar: a string, bool or number kind, which the converter writes
	// as is (without asking the type for a MarshalJSON).
	scalar bool
	typ    *codecType
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
	ct.entry = value.TypeReflectEntryOf(t)
	// The converter asks every type but a pointer (whose target it asks
	// instead, to the same effect) for a custom conversion first.
	ct.custom = ct.special == notSpecial && t.Kind() != reflect.Pointer && ct.entry.CanConvertToUnstructured()
	ct.unmarshaler = reflect.PointerTo(t).Implements(unmarshalerOf)

	switch t.Kind() {
	case reflect.Pointer:
		ct.elem = build(t.Elem(), building)
	case reflect.Slice:
		ct.bytes = t.Elem().Kind() == reflect.Uint8
		ct.elem = build(t.Elem(), building)
	case reflect.Map:
		ct.keysOK = t.Key().Kind() == reflect.String
		ct.elem = build(t.Elem(), building)
	case reflect.Struct:
		for i := range t.NumField() {
			sf := t.Field(i)
			f := field{index: i, exported: sf.IsExported()}
			tag := sf.Tag.Get("json")
			var opts string
			f.name, opts, _ = strings.Cut(tag, ",")
			if f.name == "" && !sf.Anonymous {
				f.name = sf.Name
			}
			for o := range strings.SplitSeq(opts, ",") {
				switch o {
				case "omitempty":
					f.omitEmpty = true
				case "omitzero":
					f.omitZero = value.OmitZeroFunc(sf.Type)
				}
			}
			if f.name == "-" {
				continue
			}
			f.inline = f.name == ""
			if !utf8.ValidString(f.name) && ct.badName == "" {
				ct.badName = f.name
			}
			switch sf.Type.Kind() {
			case reflect.String, reflect.Bool,
				reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
				reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
				reflect.Float32, reflect.Float64:
				f.scalar = true
			}
			f.typ = build(sf.Type, building)
			ct.fields = append(ct.fields, f)
		}
	}
	return ct
}

// isEmpty is the converter's definition of empty, for omitempty: a struct
// is never empty.
func isEmpty(v reflect.Value) bool {
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
