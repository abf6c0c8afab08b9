package observe

import (
	"github.com/inferno-ai/function-inferno/internal/structcodec"
	"google.golang.org/protobuf/types/known/structpb"
)

// The condition by which Crossplane (v2.2 and later) says its circuit
// breaker cut the composite's watch: Responsive=False, reason
// WatchCircuitOpen (github.com/crossplane/crossplane/apis/v2
// apiextensions/v1 WatchCircuitOpen).
const (
	conditionResponsive    = "Responsive"
	reasonWatchCircuitOpen = "WatchCircuitOpen"
)

// condition is the part of a Crossplane condition the function reads.
type condition struct {
	Type   string `json:"type"`
	Status string `json:"status"`
	Reason string `json:"reason"`
}

// WatchCut reports whether Crossplane's circuit breaker has cut the
// observed composite's watch: Crossplane marks the composite Responsive
// False, reason WatchCircuitOpen, before it calls the function, and lets
// only one watch event through every 30 seconds until the breaker closes.
// A composite whose conditions do not decode counts as watched: the answer
// only picks how soon the function asks to be called again.
func WatchCut(xr *structpb.Struct) bool {
	conds := xr.GetFields()["status"].GetStructValue().GetFields()["conditions"]
	if conds == nil {
		return false
	}
	var cs []condition
	if err := structcodec.DecodeValue(conds, &cs, "status.conditions"); err != nil {
		return false
	}
	for _, c := range cs {
		if c.Type == conditionResponsive {
			return c.Status == "False" && c.Reason == reasonWatchCircuitOpen
		}
	}
	return false
}
