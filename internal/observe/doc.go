// Package observe decodes what Crossplane sent beside the composite: the
// observed composed objects, by composition resource name, into their API
// types (only the fields the function reads), and the required resources
// the function asked for (the ModelCache a service names, the Services
// that could clash with its names). It decides nothing: the plan decides.
// One check is called from here: the ModelCache a service names is held to
// the service's policy as soon as its spec is decoded, by resolve's pure
// CacheRefused (resolve never sees an observed object; see Cache).
package observe
