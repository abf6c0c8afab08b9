package v1beta1

// OCIMode says what the function does with oci:// weights.
// +kubebuilder:validation:Enum=Refuse;ImageVolume
type OCIMode string

const (
	// OCIRefuse refuses oci:// weights, naming this setting: the default,
	// since a composition function cannot see whether the cluster's API
	// server, kubelets and container runtime mount image volumes.
	OCIRefuse OCIMode = "Refuse"
	// OCIImageVolume mounts oci:// weights read-only as a Kubernetes image
	// volume (volumes[].image) in the servers' pods: no pull Job and no
	// volume are composed, and the kubelet pulls the image when a server
	// starts.
	OCIImageVolume OCIMode = "ImageVolume"
)

// OCISettings says how the function serves oci:// weights.
type OCISettings struct {
	// Mode is ImageVolume where every node can mount image volumes, else
	// Refuse (the default). ImageVolume needs the ImageVolume feature of
	// Kubernetes (beta, on by default from 1.35; 1.33 and 1.34 need the
	// ImageVolume feature gate on the API server and the kubelets) and a
	// container runtime that mounts images (containerd 2.1 or later, CRI-O
	// 1.31 or later). Where the API server lacks it, the ReplicaSet
	// controller cannot create the servers' pods; where the runtime lacks
	// it, their containers fail to start.
	// +optional
	Mode OCIMode `json:"mode,omitempty"`
}

// OCIWeights is the Input's mode for oci:// weights, Refuse unless it
// says otherwise.
func (in *Input) OCIWeights() OCIMode {
	if in.OCI == nil || in.OCI.Mode == "" {
		return OCIRefuse
	}
	return in.OCI.Mode
}
