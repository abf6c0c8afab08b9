// Package status writes the composite's status from a plan: the phase and
// its message, ready replicas, the URL, per-version traffic and pull
// progress, adapter and ModelCache status, and the conditions that reach
// the claim, each built from a documented reason (package reason).
package status
