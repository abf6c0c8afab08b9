package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// TestFieldCells holds the reference's type and validation cells to what
// each schema keyword means.
func TestFieldCells(t *testing.T) {
	cases := map[string]struct {
		schema     map[string]any
		typ, valid string
	}{
		"IntWithFormatAndRange": {
			schema: map[string]any{"type": "integer", "format": "int32", "minimum": 1, "maximum": 100},
			typ:    "integer (int32)", valid: "≥ 1; ≤ 100",
		},
		"EnumWithDefault": {
			schema: map[string]any{"type": "string", "enum": []any{"a", "b"}, "default": "a"},
			typ:    "string", valid: "one of `a`, `b`",
		},
		"LengthsAndPattern": {
			schema: map[string]any{"type": "string", "minLength": 1, "maxLength": 63, "pattern": "^(a|b)$"},
			typ:    "string", valid: "at least 1 character; at most 63 characters; matches `^(a\\|b)$`",
		},
		"ListOfStrings": {
			schema: map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "maxItems": 2},
			typ:    "[]string", valid: "at most 2 items",
		},
		"Quantity": {
			schema: map[string]any{"anyOf": []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}, "x-kubernetes-int-or-string": true},
			typ:    "integer or string", valid: "a quantity, e.g. `500m`, `4`, `16Gi`",
		},
		"MapOfStrings": {
			schema: map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
			typ:    "map[string]string",
		},
		"CEL": {
			schema: map[string]any{"type": "object", "x-kubernetes-validations": []any{map[string]any{"rule": "self.a || self.b", "message": "set a or b"}}},
			typ:    "object", valid: "CEL `self.a \\|\\| self.b`: set a or b",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := parseSchema(tc.schema)
			if err != nil {
				t.Fatal(err)
			}
			got := [2]string{typeOf(s), validationOf(s)}
			if diff := cmp.Diff([2]string{tc.typ, tc.valid}, got); diff != "" {
				t.Errorf("[type, validation] (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUnknownKeywordRefused: a keyword the reference cannot render stops
// the generator rather than vanishing from the docs.
func TestUnknownKeywordRefused(t *testing.T) {
	_, err := parseSchema(map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true})
	if err == nil || !strings.Contains(err.Error(), "x-kubernetes-preserve-unknown-fields") {
		t.Errorf("parseSchema error = %v, want one naming x-kubernetes-preserve-unknown-fields", err)
	}
}

// TestReferenceListsEveryField: every property of the generated schemas has
// a row in its XRD's reference, so a new field cannot go undocumented.
func TestReferenceListsEveryField(t *testing.T) {
	files, err := generate(controllerGen(t), root)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range apis {
		doc := string(files[docsDir+"/"+a.xrdName()+".md"])
		var x struct {
			Spec struct {
				Versions []struct {
					Schema struct {
						OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
					} `json:"schema"`
				} `json:"versions"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(files[a.Dir+"/"+a.FilePrefix+xrdFile], &x); err != nil {
			t.Fatal(err)
		}
		s, err := parseSchema(x.Spec.Versions[0].Schema.OpenAPIV3Schema)
		if err != nil {
			t.Fatal(err)
		}
		var missing []string
		for _, p := range fieldPaths("", s) {
			if !strings.Contains(doc, "| `"+p+"` |") {
				missing = append(missing, p)
			}
		}
		if len(missing) > 0 {
			t.Errorf("%s has no row for: %s", a.xrdName(), strings.Join(missing, ", "))
		}
	}
}

// fieldPaths lists the dotted path of every property under s.
func fieldPaths(prefix string, s *schema) []string {
	var out []string
	for k, p := range s.Properties {
		fp := k
		if prefix != "" {
			fp = prefix + "." + k
		}
		out = append(out, fp)
		switch {
		case p.Items != nil:
			out = append(out, fieldPaths(fp+"[]", p.Items)...)
		case p.AdditionalProperties != nil:
			out = append(out, fieldPaths(fp+"[*]", p.AdditionalProperties)...)
		default:
			out = append(out, fieldPaths(fp, p)...)
		}
	}
	return out
}
