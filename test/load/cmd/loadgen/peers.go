package main

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/inferno-ai/function-inferno/test/load"
)

// A peer is another project's composition function, measured beside
// function-inferno on the same XR and observed objects.
type peer struct {
	name string
	bin  string
	// req is the shared request with the peer's own Composition input.
	req *fnv1.RunFunctionRequest
	// want is how many desired objects its answer must hold:
	// function-inferno's.
	want int
}

// check says whether rsp is an answer that did the peer's work: no Fatal
// result (load.Client.Run refuses those) and every desired object there.
// A peer that answered with fewer objects, or none, would look fast for
// the wrong reason.
func (p *peer) check(rsp *fnv1.RunFunctionResponse) error {
	if got := len(rsp.GetDesired().GetResources()); got != p.want {
		return fmt.Errorf("%s answered with %d desired objects, not %d: %v", p.name, got, p.want, slices.Sorted(maps.Keys(rsp.GetDesired().GetResources())))
	}
	return nil
}

// peerFlag is -peer name=binary, repeated.
type peerFlag []*peer

func (f *peerFlag) String() string {
	var names []string
	for _, p := range *f {
		names = append(names, p.name)
	}
	return strings.Join(names, ",")
}

func (f *peerFlag) Set(v string) error {
	name, bin, ok := strings.Cut(v, "=")
	if !ok || name == "" || bin == "" {
		return fmt.Errorf("want name=binary, not %q", v)
	}
	*f = append(*f, &peer{name: name, bin: bin})
	return nil
}

// checkPeer asks the peer once, checks its answer, and prints to stderr
// how it differs from function-inferno's (want): its size, and, per
// desired object, the fields one has and the other has not or has with
// another value. docs/performance.md reads this to say what differs.
func checkPeer(s server, pki *load.PKI, want *fnv1.RunFunctionResponse) error {
	got, err := runOnce(s, pki, s.peer.req)
	if err != nil {
		return err
	}
	if err := s.peer.check(got); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%s answers with %d bytes (function-inferno %d), %d desired objects; differences from function-inferno's answer:\n",
		s.name, proto.Size(got), proto.Size(want), len(got.GetDesired().GetResources()))
	wantObjs, gotObjs := byKindAndName(want), byKindAndName(got)
	for _, k := range slices.Sorted(maps.Keys(unionKeys(wantObjs, gotObjs))) {
		w, g := wantObjs[k], gotObjs[k]
		switch {
		case w == nil:
			fmt.Fprintf(os.Stderr, "  %s: only in %s's answer\n", k, s.name)
			continue
		case g == nil:
			fmt.Fprintf(os.Stderr, "  %s: only in function-inferno's answer\n", k)
			continue
		}
		d := diffFields(w, g)
		fmt.Fprintf(os.Stderr, "  %s: %d of %d fields differ\n", k, len(d), len(leaves(w)))
		for _, line := range d {
			fmt.Fprintf(os.Stderr, "    %s\n", line)
		}
	}
	comp := func(r *fnv1.RunFunctionResponse) map[string]*structpb.Value {
		out := map[string]*structpb.Value{}
		if st := r.GetDesired().GetComposite().GetResource(); st != nil {
			out["composite"] = structpb.NewStructValue(st)
		}
		out["composite ready"] = structpb.NewStringValue(r.GetDesired().GetComposite().GetReady().String())
		out["conditions"] = structpb.NewNumberValue(float64(len(r.GetConditions())))
		return out
	}
	for _, line := range diffFields(structpb.NewStructValue(&structpb.Struct{Fields: comp(want)}), structpb.NewStructValue(&structpb.Struct{Fields: comp(got)})) {
		fmt.Fprintf(os.Stderr, "  %s\n", line)
	}
	return nil
}

// byKindAndName keys a response's desired objects by kind, or by kind and
// name where a kind comes more than once: the peers cannot always name
// their objects, or their resources, as function-inferno does. The
// resource's readiness is a field "ready" beside the object's own.
func byKindAndName(rsp *fnv1.RunFunctionResponse) map[string]*structpb.Value {
	kinds := map[string]int{}
	for _, r := range rsp.GetDesired().GetResources() {
		kinds[r.GetResource().GetFields()["kind"].GetStringValue()]++
	}
	out := map[string]*structpb.Value{}
	for key, r := range rsp.GetDesired().GetResources() {
		f := r.GetResource().GetFields()
		k := f["kind"].GetStringValue()
		if kinds[k] > 1 {
			k += " " + f["metadata"].GetStructValue().GetFields()["name"].GetStringValue()
		}
		v := structpb.NewStructValue(proto.Clone(r.GetResource()).(*structpb.Struct))
		v.GetStructValue().Fields["ready"] = structpb.NewStringValue(r.GetReady().String())
		v.GetStructValue().Fields["resource name"] = structpb.NewStringValue(key)
		out[k] = v
	}
	return out
}

// diffFields lists the leaf fields where a (function-inferno's) and b (a
// peer's) differ: "- path = value" only in a, "+ path = value" only in b,
// "~ path: a → b" with different values.
func diffFields(a, b *structpb.Value) []string {
	la, lb := leaves(a), leaves(b)
	var out []string
	for _, p := range slices.Sorted(maps.Keys(unionKeys(la, lb))) {
		va, inA := la[p]
		vb, inB := lb[p]
		switch {
		case !inB:
			out = append(out, fmt.Sprintf("- %s = %s", p, short(va)))
		case !inA:
			out = append(out, fmt.Sprintf("+ %s = %s", p, short(vb)))
		case va != vb:
			out = append(out, fmt.Sprintf("~ %s: %s → %s", p, short(va), short(vb)))
		}
	}
	return out
}

// leaves flattens v into path → value (as JSON would write it).
func leaves(v *structpb.Value) map[string]string {
	out := map[string]string{}
	var walk func(path string, v *structpb.Value)
	walk = func(path string, v *structpb.Value) {
		switch k := v.GetKind().(type) {
		case *structpb.Value_StructValue:
			if len(k.StructValue.GetFields()) == 0 {
				out[path] = "{}"
			}
			for name, f := range k.StructValue.GetFields() {
				walk(strings.TrimPrefix(path+"."+name, "."), f)
			}
		case *structpb.Value_ListValue:
			if len(k.ListValue.GetValues()) == 0 {
				out[path] = "[]"
			}
			for i, e := range k.ListValue.GetValues() {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		default:
			b, _ := v.MarshalJSON()
			out[path] = string(b)
		}
	}
	walk("", v)
	return out
}

func short(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

func unionKeys[V any](a, b map[string]V) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}
