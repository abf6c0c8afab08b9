package fn

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// TestCompositeReady: the composite is ready only when every desired
// resource says so, nothing is waited for, and no earlier step said no.
func TestCompositeReady(t *testing.T) {
	res := func(rs ...fnv1.Ready) map[string]*fnv1.Resource {
		m := map[string]*fnv1.Resource{}
		for i, r := range rs {
			m[string(rune('a'+i))] = &fnv1.Resource{Ready: r}
		}
		return m
	}
	cases := map[string]struct {
		resources map[string]*fnv1.Resource
		earlier   fnv1.Ready
		waiting   bool
		want      fnv1.Ready
	}{
		"all ready":                     {resources: res(fnv1.Ready_READY_TRUE, fnv1.Ready_READY_TRUE), want: fnv1.Ready_READY_TRUE},
		"one not ready":                 {resources: res(fnv1.Ready_READY_TRUE, fnv1.Ready_READY_FALSE), want: fnv1.Ready_READY_FALSE},
		"an earlier step's unspecified": {resources: res(fnv1.Ready_READY_TRUE, fnv1.Ready_READY_UNSPECIFIED), want: fnv1.Ready_READY_FALSE},
		"waiting for a cache":           {resources: res(), waiting: true, want: fnv1.Ready_READY_FALSE},
		"an earlier step said no":       {resources: res(fnv1.Ready_READY_TRUE), earlier: fnv1.Ready_READY_FALSE, want: fnv1.Ready_READY_FALSE},
		"an earlier step said yes":      {resources: res(fnv1.Ready_READY_FALSE), earlier: fnv1.Ready_READY_TRUE, want: fnv1.Ready_READY_FALSE},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := &fnv1.RunFunctionResponse{Desired: &fnv1.State{Resources: tc.resources, Composite: &fnv1.Resource{Ready: tc.earlier}}}
			if got := compositeReady(rsp, tc.waiting); got != tc.want {
				t.Errorf("compositeReady = %v, want %v", got, tc.want)
			}
		})
	}
}
