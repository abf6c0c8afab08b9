package resolve

import (
	"errors"
	"fmt"
	"strings"
)

// FieldErrors collects problems with a claim, each naming its field, so
// that one Fatal result tells the user everything to fix at once.
type FieldErrors []string

// Add records a problem with field, the claim's or the Input's field path
// (e.g. "spec.replicas.min"), as "<field>: <message>"; the message should
// say what to do.
func (e *FieldErrors) Add(field, format string, a ...any) {
	*e = append(*e, field+": "+fmt.Sprintf(format, a...))
}

// Err is every problem joined into one error, in the order they were
// found, or nil when there is none.
func (e FieldErrors) Err() error {
	if len(e) == 0 {
		return nil
	}
	return errors.New(strings.Join(e, "; "))
}
