package fn

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPrune(t *testing.T) {
	cases := map[string]struct {
		in, want  map[string]any
		wantEmpty bool
	}{
		"Empty":           {in: map[string]any{}, want: map[string]any{}, wantEmpty: true},
		"Null":            {in: map[string]any{"a": nil, "b": "x"}, want: map[string]any{"b": "x"}},
		"EmptyObject":     {in: map[string]any{"status": map[string]any{}, "b": 1}, want: map[string]any{"b": 1}},
		"NestedEmpty":     {in: map[string]any{"a": map[string]any{"b": map[string]any{"c": nil}}}, want: map[string]any{}, wantEmpty: true},
		"EmptyList":       {in: map[string]any{"a": []any{}, "b": true}, want: map[string]any{"b": true}},
		"KeepsZeroValues": {in: map[string]any{"n": int64(0), "f": false, "s": ""}, want: map[string]any{"n": int64(0), "f": false, "s": ""}},
		"ListElements": {
			in:   map[string]any{"l": []any{map[string]any{"name": "a", "x": nil, "y": map[string]any{}}, "s"}},
			want: map[string]any{"l": []any{map[string]any{"name": "a"}, "s"}},
		},
		"DeepestFirst": {
			in:   map[string]any{"a": map[string]any{"b": map[string]any{}, "c": map[string]any{"d": 1, "e": nil}}},
			want: map[string]any{"a": map[string]any{"c": map[string]any{"d": 1}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			gotEmpty := prune(tc.in)
			if diff := cmp.Diff(tc.want, tc.in); diff != "" {
				t.Errorf("prune (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEmpty, gotEmpty); diff != "" {
				t.Errorf("empty (-want +got):\n%s", diff)
			}
		})
	}
}

// TestToComposed: typed objects leave without the converter's nulls and
// empty objects, which server-side apply would read as opinions.
func TestToComposed(t *testing.T) {
	cases := map[string]struct {
		obj  *corev1.ConfigMap
		want map[string]any
	}{
		"Minimal": {
			obj:  &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "team-a"}},
			want: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x", "namespace": "team-a"}},
		},
		"KeepsData": {
			obj: &corev1.ConfigMap{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: metav1.ObjectMeta{Name: "x", Labels: map[string]string{"a": "b"}},
				Data:       map[string]string{"k": ""},
			},
			want: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x", "labels": map[string]any{"a": "b"}}, "data": map[string]any{"k": ""}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u, err := toComposed(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, u.Object); diff != "" {
				t.Errorf("toComposed (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRenderedObjectsHaveNoEmpties: no desired object carries a null, an
// empty object or an empty list, and the emptyDir volumes survive (they
// carry a size limit).
func TestRenderedObjectsHaveNoEmpties(t *testing.T) {
	servers, _ := pulled(t, autoscalingXR(), nil)
	var walk func(path string, v any) []string
	walk = func(path string, v any) []string {
		var bad []string
		switch x := v.(type) {
		case nil:
			return []string{path + " is null"}
		case map[string]any:
			if len(x) == 0 {
				return []string{path + " is an empty object"}
			}
			for k, e := range x {
				bad = append(bad, walk(path+"."+k, e)...)
			}
		case []any:
			if len(x) == 0 {
				return []string{path + " is an empty list"}
			}
			for _, e := range x {
				bad = append(bad, walk(path+"[]", e)...)
			}
		}
		return bad
	}
	for _, n := range desiredNames(servers) {
		if diff := cmp.Diff([]string(nil), walk(n, desiredMap(t, servers, n))); diff != "" {
			t.Errorf("%s has empties (-want +got):\n%s", n, diff)
		}
	}
	vols, _ := nested(desiredMap(t, servers, resourceDeployment), "spec", "template", "spec", "volumes")
	var emptyDirs []string
	for _, v := range vols.([]any) {
		m := v.(map[string]any)
		if ed, ok := m["emptyDir"].(map[string]any); ok && ed["sizeLimit"] != nil {
			emptyDirs = append(emptyDirs, m["name"].(string))
		}
	}
	if diff := cmp.Diff([]string{volumeTmp, volumeShm}, emptyDirs); diff != "" {
		t.Errorf("emptyDir volumes with a size limit (-want +got):\n%s", diff)
	}
}
