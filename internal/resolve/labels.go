package resolve

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Well-known labels, and our own annotations, on composed objects.
const (
	LabelName      = "app.kubernetes.io/name"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelVersion   = "app.kubernetes.io/version"
	LabelComponent = "app.kubernetes.io/component"
	LabelPartOf    = "app.kubernetes.io/part-of"

	ManagedBy = "function-inferno"
	PartOf    = "inferno"

	// AnnotationWeights on the server's pod template records which weights
	// it mounts, so that a later call can keep serving them while a new
	// revision is pulled.
	AnnotationWeights = "inference.inferno.io/weights"
	// AnnotationModelURI on the pull Job records what it downloads.
	AnnotationModelURI = "inference.inferno.io/model-uri"
)

// Components of an InferenceService, as the component label names them.
const (
	ComponentCache  = "model-cache"
	ComponentPuller = "model-puller"
	ComponentServer = "model-server"
	// ComponentCanary marks the servers of a version other than the
	// primary, so that the primary's selector never matches them.
	ComponentCanary = "model-server-canary"
	ComponentRoute  = "model-route"
)

// Labels returns the labels of one component's objects of version v.
func (s *Spec) Labels(v *Version, component string) map[string]string {
	l := map[string]string{
		LabelInstance:  s.Name,
		LabelManagedBy: ManagedBy,
		LabelComponent: component,
		LabelPartOf:    PartOf,
	}
	// A ModelCache serves no framework.
	if s.Model.Framework != "" {
		l[LabelName] = string(s.Model.Framework)
	}
	if v.Model.Version != "" {
		l[LabelVersion] = v.Model.Version
	}
	return l
}

// Selector selects the model servers. It must never change once a
// Deployment exists (the field is immutable), so it holds only labels that
// are fixed for the life of a claim.
func (s *Spec) Selector() map[string]string {
	return map[string]string{LabelInstance: s.Name, LabelComponent: ComponentServer}
}

// SplitSelector selects the servers of every version of a split: the
// claim's instance and the framework's name label. Both are on the
// primary's servers from their start, so the Service <name> can switch to
// it without restarting them; the pull Jobs' pods do not carry the name
// label, so they never become endpoints.
func (s *Spec) SplitSelector() map[string]string {
	return map[string]string{LabelInstance: s.Name, LabelName: string(s.Model.Framework)}
}

// Owns reports whether the object is controlled by the composite being
// rendered.
func (s *Spec) Owns(m metav1.ObjectMeta) bool {
	if c := metav1.GetControllerOfNoCopy(&m); c != nil && c.UID != "" && s.CompositeUID != "" {
		return string(c.UID) == s.CompositeUID
	}
	return m.Labels[LabelComposite] != "" && m.Labels[LabelComposite] == s.Composite
}

// LabelComposite is the label Crossplane puts on every composed object
// with its composite's name.
const LabelComposite = "crossplane.io/composite"
