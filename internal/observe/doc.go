// Package observe decodes what Crossplane sent beside the composite: the
// observed composed objects, by composition resource name, into their API
// types (only the fields the function reads), and the required resources
// the function asked for (the ModelCache a service names, the Services
// that could clash with its names). It judges nothing: the plan decides.
package observe
