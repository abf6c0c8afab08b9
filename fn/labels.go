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
)

// labels returns the labels of one component's objects.
func (s *service) labels(component string) map[string]string {
	l := map[string]string{
		labelName:      string(s.Model.Framework),
		labelInstance:  s.Name,
		labelManagedBy: managedBy,
		labelComponent: component,
		labelPartOf:    partOf,
	}
	if s.Model.Version != "" {
		l[labelVersion] = s.Model.Version
	}
	return l
}

// selector selects the model servers. It must never change once a
// Deployment exists (the field is immutable), so it holds only labels that
// are fixed for the life of a claim.
func (s *service) selector() map[string]string {
	return map[string]string{labelInstance: s.Name, labelComponent: componentServer}
}
