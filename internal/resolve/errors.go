package resolve

import (
	"errors"
	"fmt"
	"strings"
)

// FieldErrors collects problems with a claim, each naming its field, so
// that one Fatal result tells the user everything to fix at once.
type FieldErrors []string

func (e *FieldErrors) Add(field, format string, a ...any) {
	*e = append(*e, field+": "+fmt.Sprintf(format, a...))
}

func (e FieldErrors) Err() error {
	if len(e) == 0 {
		return nil
	}
	return errors.New(strings.Join(e, "; "))
}
