// Package reason holds every condition reason the function reports, as a
// typed constant with its condition type, status, meaning and what to do.
// A Condition can only be built from a Reason, so every condition a user
// sees is documented; docs/troubleshooting.md's Conditions table is
// generated from this package.
package reason
