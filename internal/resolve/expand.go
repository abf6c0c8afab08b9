package resolve

import (
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
)

// What a container receives is not what its spec says: the kubelet
// expands $(VAR) in command, args and env values from the container's
// environment before it starts the process. A policy judges what the
// server will receive, so it expands as the kubelet does (the rules of
// k8s.io/kubernetes/third_party/forked/golang/expansion, checked against
// the real kubelet by e2e scenario 34):
//
//  1. $(NAME) of a variable defined before the string (for an env value:
//     earlier in the list; for args: anywhere in it) is replaced by its
//     value;
//  2. $(NAME) of a variable not defined is left as written;
//  3. $$ is one $, and $( without a closing ) is left as written, as is a
//     $ before any other character;
//  4. an env value is expanded once, with the values of the variables
//     before it as they were expanded; a valueFrom value is not expanded.
//
// The kubelet also expands references to the Service link variables
// (<SERVICE>_SERVICE_HOST, …) the pod gets when a name is not in its own
// environment; their values are addresses and ports, which can make no
// flag, so a reference left as written here judges the same.

// Var is a variable of a container's environment as the kubelet resolves
// it: its value after expansion, of which the function sees the part
// before Hidden. Hidden is -1 when it sees all of it, and 0 for a value
// from a Secret, ConfigMap, field or resource (valueFrom), which it never
// sees (Value is then the variable's reference).
type Var struct {
	Value  string
	Hidden int
}

// Environ is a container's environment by name, each variable expanded as
// the kubelet expands it (rule 4). A later variable of the same name
// replaces an earlier one, as the kubelet's does.
func Environ(env []corev1.EnvVar) map[string]Var {
	vars := make(map[string]Var, len(env))
	for _, e := range env {
		if e.ValueFrom != nil {
			vars[e.Name] = Var{Value: "$(" + e.Name + ")", Hidden: 0}
			continue
		}
		v, hidden := Expand(e.Value, vars)
		vars[e.Name] = Var{Value: v, Hidden: hidden}
	}
	return vars
}

// Expand is s as the kubelet passes it to the process, with the variables
// vars. hidden is the offset in the result at which the first part the
// function cannot see begins (a hidden value is written as its variable's
// reference), or -1 when the result is exact.
func Expand(s string, vars map[string]Var) (out string, hidden int) {
	hidden = -1
	if !strings.Contains(s, "$") {
		return s, hidden
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		next, size := utf8.DecodeRuneInString(s[i+1:])
		switch next {
		case '$': // rule 3: an escaped $
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 { // rule 3: an unclosed reference stays
				b.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+end]
			v, ok := vars[name]
			switch {
			case !ok: // rule 2
				b.WriteString("$(" + name + ")")
			default:
				if v.Hidden >= 0 && hidden < 0 {
					hidden = b.Len() + v.Hidden
				}
				b.WriteString(v.Value)
			}
			i += 2 + end
		default: // rule 3: a $ that starts nothing, and the rune after it
			// (as the kubelet decodes it: an invalid byte becomes U+FFFD,
			// which an argument from the API, valid UTF-8, never has)
			b.WriteByte('$')
			b.WriteRune(next)
			i += size
		}
	}
	return b.String(), hidden
}
