// Package fn is function-inferno's edge. RunFunction reads the request
// and writes the response with function-sdk-go's helpers, dispatches a
// ModelCache or an InferenceService, and tells the story of one call in
// one direction through the stages in internal/: resolve, observe, plan,
// render, status (see compose). Everything between the request and the
// response is a pure function of it.
package fn
