package structcodec

import "strings"

// standardPaths puts the standard path (standard.go) in the codec's place:
// "encode", "decode" or both, comma-separated. It is empty in every normal
// build; `make bench-codec` links variants of the function with it set
// (-ldflags=-X=github.com/inferno-ai/function-inferno/internal/structcodec.standardPaths=encode)
// to measure what each direction of the codec buys. The tests expect it
// empty: the standard path's errors name no field path.
var standardPaths string

var (
	standardEncode = strings.Contains(standardPaths, "encode")
	standardDecode = strings.Contains(standardPaths, "decode")
)
