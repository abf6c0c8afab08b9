package resolve

import (
	"github.com/inferno-ai/function-inferno/input/v1beta1"
)

// pullProgress is input.pullProgress, resolved.
type pullProgress struct {
	// Interval is the seconds between two reports.
	Interval int32
}

// resolveProgress reads input.pullProgress; nil when pulls do not report.
func resolveProgress(in *v1beta1.Input, errs *FieldErrors) *pullProgress {
	n := in.ProgressInterval()
	if n == 0 {
		return nil
	}
	if n < 2 || n > 300 {
		errs.Add("input.pullProgress.intervalSeconds", "%d is out of range; use 2 to 300 seconds (each report is a PATCH to the API server and a reconcile of the claim)", n)
	}
	return &pullProgress{Interval: n}
}
