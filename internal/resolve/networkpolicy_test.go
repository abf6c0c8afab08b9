package resolve

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestInterceptorNamespace: the servers admit KEDA's HTTP interceptor from
// the namespace its scaler's address names, or from the Input's
// kedaNamespace when that agrees or the address names none.
func TestInterceptorNamespace(t *testing.T) {
	cases := []struct {
		set, scaler string
		want        string
		// refused is a word of the refusal, "" for none.
		refused string
	}{
		{scaler: "keda-add-ons-http-external-scaler.keda:9090", want: "keda"},
		{scaler: "scaler.autoscaling.svc:9090", want: "autoscaling"},
		{scaler: "scaler.autoscaling.svc.cluster.local:9090", want: "autoscaling"},
		{scaler: "scaler.autoscaling.svc.corp.internal:9090", want: "autoscaling"},
		{set: "autoscaling", scaler: "scaler.autoscaling:9090", want: "autoscaling"},
		{set: "keda", scaler: "scaler.autoscaling:9090", want: "keda", refused: "disagrees"},
		// No namespace in the address: the Input must name it.
		{set: "keda", scaler: "127.0.0.1:9090", want: "keda"},
		{set: "keda", scaler: "scaler:9090", want: "keda"},
		{scaler: "127.0.0.1:9090", refused: "is required"},
		{scaler: "scaler:9090", refused: "is required"},
		{scaler: "scaler.example.com:9090", refused: "is required"},
		{scaler: "scaler.Bad_NS:9090", refused: "is required"},
		{set: "Not_A_Label", scaler: "scaler.keda:9090", refused: "not a namespace name"},
	}
	for _, tc := range cases {
		t.Run(tc.set+"@"+tc.scaler, func(t *testing.T) {
			var errs FieldErrors
			got := interceptorNamespace(tc.set, tc.scaler, &errs)
			msg := strings.Join(errs, "; ")
			if tc.refused == "" {
				if msg != "" {
					t.Fatalf("refused: %s", msg)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("namespace (-want +got):\n%s", diff)
				}
				return
			}
			if !strings.Contains(msg, tc.refused) || !strings.HasPrefix(msg, "input.networkPolicy.kedaNamespace: ") {
				t.Errorf("refusal %q, want one at input.networkPolicy.kedaNamespace saying %q", msg, tc.refused)
			}
		})
	}
}
