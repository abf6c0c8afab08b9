package structcodec

// standardPaths, when "decode", puts the standard path (standard.go) in
// the decoder's place. It is empty in every normal build; `make
// bench-codec` links a variant of the function with it set
// (-ldflags=-X=github.com/inferno-ai/function-inferno/internal/structcodec.standardPaths=decode)
// to measure what the decoder buys. The tests expect it empty: the
// standard path's errors name no field path.
var standardPaths string

var standardDecode = standardPaths == "decode"
