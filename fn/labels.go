package fn

// Well-known labels, and our own annotations, on composed objects.
const (
	labelName      = "app.kubernetes.io/name"
	labelInstance  = "app.kubernetes.io/instance"
	labelManagedBy = "app.kubernetes.io/managed-by"
	labelVersion   = "app.kubernetes.io/version"
	labelComponent = "app.kubernetes.io/component"
	labelPartOf    = "app.kubernetes.io/part-of"

	managedBy = "function-inferno"
	partOf    = "inferno"

	// annotationWeights on the server's pod template records which weights
	// it mounts, so that a later call can keep serving them while a new
	// revision is pulled.
	annotationWeights = "inference.inferno.io/weights"
	// annotationModelURI on the pull Job records what it downloads.
	annotationModelURI = "inference.inferno.io/model-uri"
)

// Components of an InferenceService, as the component label names them.
const (
	componentCache  = "model-cache"
	componentPuller = "model-puller"
	componentServer = "model-server"
	// componentCanary marks the servers of a version other than the
	// primary, so that the primary's selector never matches them.
	componentCanary = "model-server-canary"
	componentRoute  = "model-route"
)

// labels returns the labels of one component's objects of version v.
func (s *resolvedSpec) labels(v *modelVersion, component string) map[string]string {
	l := map[string]string{
		labelInstance:  s.Name,
		labelManagedBy: managedBy,
		labelComponent: component,
		labelPartOf:    partOf,
	}
	// A ModelCache serves no framework.
	if s.Model.Framework != "" {
		l[labelName] = string(s.Model.Framework)
	}
	if v.Model.Version != "" {
		l[labelVersion] = v.Model.Version
	}
	return l
}

// selector selects the model servers. It must never change once a
// Deployment exists (the field is immutable), so it holds only labels that
// are fixed for the life of a claim.
func (s *resolvedSpec) selector() map[string]string {
	return map[string]string{labelInstance: s.Name, labelComponent: componentServer}
}

// splitSelector selects the servers of every version of a split: the
// claim's instance and the framework's name label. Both are on the
// primary's servers from their start, so the Service <name> can switch to
// it without restarting them; the pull Jobs' pods do not carry the name
// label, so they never become endpoints.
func (s *resolvedSpec) splitSelector() map[string]string {
	return map[string]string{labelInstance: s.Name, labelName: string(s.Model.Framework)}
}
