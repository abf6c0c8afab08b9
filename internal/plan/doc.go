// Package plan decides, once per call, everything the call returns: for
// each version of a service where its weights come from (one WeightsSource
// per kind of source), what of it is observed and ready, how many servers
// it runs (make before break), which of its objects are returned, and the
// parts the versions share (the cache volume, the Service, the route, the
// InferencePool). New makes the Plan from the resolved spec and the
// observed objects; Resources builds its objects through the render stage,
// and the status stage reports it. Neither changes it.
package plan
