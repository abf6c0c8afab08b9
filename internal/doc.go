// Package internal holds the stages of a call, one package each, and code
// that knows nothing of inference (structcodec). Each stage imports only
// the stages below it (TestStackImportsRunOneWay holds that):
//
//	fn        the edge: request in, response out (function-sdk-go helpers)
//	status    the report: phase, conditions, counts, URL, per-version status
//	plan      decisions: versions, weights sources, servers, readiness, once
//	observe   the observed and required objects, decoded once into types
//	render    one file per composed kind: builders, readiness rules, names
//	resolve   decode the claim, merge the Input, every check; pure
//	reason    the typed condition reasons, each with its documentation
//	kinds/*   Go types of foreign kinds (LWS, KEDA, PodMonitor)
package internal
