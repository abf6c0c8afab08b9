// Package render builds the composed objects, one file per composed kind:
// each file holds that kind's builders, its readiness rule (stated in the
// rule's doc comment as a numbered list, as function-auto-ready does) and
// its composition resource names. Builders are pure functions of the
// resolved spec and the plan's decisions, passed as arguments; readiness
// rules are pure functions of the observed object. Kinds lists every kind
// the function composes, keyed by GroupVersionKind.
package render
