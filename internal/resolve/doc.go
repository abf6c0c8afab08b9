// Package resolve is the first stage of a call: it decodes the composite
// (an InferenceService or a ModelCache) and the function's Input, merges
// the platform's defaults and presets into what the claim asked for, and
// runs every check on the result, so that a bad claim or Input is refused
// before anything is observed or built. Its errors name the field and the
// fix.
//
// Resolve is pure: it reads the spec and the Input only, never observed
// objects, and nothing a later stage does rewrites its Spec. A feature's
// checks live here under the feature's name (resolve/scaledobject.go,
// resolve/multinode.go, resolve/adapters.go, ...).
package resolve
