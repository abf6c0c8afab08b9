package fn

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	inferencev1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
)

// The endpoint picker (EPP) of a claim's InferencePool: its Deployment,
// Service, ServiceAccount, Role, RoleBinding and ConfigMap. They are six
// kinds in one file, against the rule of one file per kind, because they
// are one thing: each exists only for the others, they share one name
// (<name>-epp), one set of labels and three ports, and reading them side
// by side is how one checks that the Service reaches the ports the
// Deployment opens, that the RoleBinding grants the Role to the
// ServiceAccount the pod runs as, and that the pod mounts the ConfigMap's
// key. The servers' Deployment and Service keep their own files. They
// follow upstream's inferencepool Helm chart of v1.2.0
// (config/charts/inferencepool in the module).

// Composition resource names of the picker's objects. None starts with
// "deployment-", "service-", "hpa-" or "pull-job-", which name the
// servers' objects of a version.
const (
	resourcePicker               = "picker"
	resourcePickerService        = "picker-service"
	resourcePickerServiceAccount = "picker-serviceaccount"
	resourcePickerRole           = "picker-role"
	resourcePickerRoleBinding    = "picker-rolebinding"
	resourcePickerConfig         = "picker-config"
)

// componentPicker is the component label of the picker's objects.
const componentPicker = "endpoint-picker"

// pickerApp is the picker's app.kubernetes.io/name label. It is not the
// framework's, so no selector of the servers (the pool's, the Services')
// ever matches the picker's pod.
const pickerApp = "inference-endpoint-picker"

// The picker's ports (upstream's defaults) and its configuration file.
const (
	pickerGRPCPort   = inferencev1.PortNumber(9002)
	pickerHealthPort = int32(9003)
	pickerMetrics    = int32(9090)
	pickerContainer  = "epp"
	pickerConfigDir  = "/config"
	pickerConfigKey  = "config.yaml"
	// pickerHealthService is the gRPC health service a single picker
	// answers on (upstream's probes without leader election).
	pickerHealthService = "inference-extension"
	// annotationPickerConfig on the picker's pod template records its
	// configuration's hash, so a new one restarts it.
	annotationPickerConfig = "inference.inferno.io/picker-config"
)

// pickerName names every object of the picker: <name>-epp, as upstream's
// chart names them after the pool.
func pickerName(s *resolvedSpec) string { return s.Name + "-epp" }

// pickerLabels are the labels of the picker's objects and pod.
func pickerLabels(s *resolvedSpec) map[string]string {
	return map[string]string{
		labelName:      pickerApp,
		labelInstance:  s.Name,
		labelManagedBy: managedBy,
		labelComponent: componentPicker,
		labelPartOf:    partOf,
	}
}

// pickerSelector selects the picker's pod. It never changes.
func pickerSelector(s *resolvedSpec) map[string]string {
	return map[string]string{labelInstance: s.Name, labelComponent: componentPicker}
}

func pickerMeta(s *resolvedSpec) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: pickerName(s), Namespace: s.Namespace, Labels: pickerLabels(s)}
}

// renderPickerDeployment builds the picker: one replica (upstream's
// recommendation: its prefix-cache scorer keeps state), replaced with
// Recreate, under its own ServiceAccount with an API token (it watches its
// pool and the pods), meeting the restricted Pod Security Standard like
// every pod the function renders. The image and extra flags are the
// platform's (input), never the claim's.
func renderPickerDeployment(s *resolvedSpec) *appsv1.Deployment {
	pk := s.Pool.Picker
	args := []string{
		"--pool-name", s.Name,
		"--pool-namespace", s.Namespace,
		"--config-file", pickerConfigDir + "/" + pickerConfigKey,
		"--grpc-port", strconv.Itoa(int(pickerGRPCPort)),
		"--grpc-health-port", strconv.Itoa(int(pickerHealthPort)),
		"--metrics-port", strconv.Itoa(int(pickerMetrics)),
		"--zap-encoder", "json",
		"--tracing=false",
		// Authenticating metrics scrapes needs tokenreviews and
		// subjectaccessreviews, cluster-wide: the picker's Role stays in
		// the claim's namespace instead.
		"--metrics-endpoint-auth=false",
	}
	args = append(args, pk.Args...)
	probe := func(period int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: pickerHealthPort, Service: ptrTo(pickerHealthService)}},
			PeriodSeconds: period,
		}
	}
	liveness := probe(10)
	liveness.InitialDelaySeconds = 5
	field := func(path string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}
	}
	labels := pickerLabels(s)
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: pickerMeta(s),
		Spec: appsv1.DeploymentSpec{
			Replicas: ptrTo(int32(1)),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Selector: &metav1.LabelSelector{MatchLabels: pickerSelector(s)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{annotationPickerConfig: s.Pool.ConfigHash}},
				Spec: corev1.PodSpec{
					SecurityContext:              podSecurityContext(),
					ServiceAccountName:           pickerName(s),
					AutomountServiceAccountToken: ptrTo(true),
					// Upstream: as long as the longest grace period of
					// the pool's servers.
					TerminationGracePeriodSeconds: ptrTo(int64(130)),
					NodeSelector:                  pk.NodeSelector,
					Tolerations:                   pk.Tolerations,
					Containers: []corev1.Container{{
						Name:            pickerContainer,
						Image:           pk.Image,
						ImagePullPolicy: corev1.PullIfNotPresent,
						Args:            args,
						Ports: []corev1.ContainerPort{
							{Name: "grpc", ContainerPort: int32(pickerGRPCPort), Protocol: corev1.ProtocolTCP},
							{Name: "grpc-health", ContainerPort: pickerHealthPort, Protocol: corev1.ProtocolTCP},
							{Name: "metrics", ContainerPort: pickerMetrics, Protocol: corev1.ProtocolTCP},
						},
						Env: []corev1.EnvVar{
							{Name: "NAMESPACE", ValueFrom: field("metadata.namespace")},
							{Name: "POD_NAME", ValueFrom: field("metadata.name")},
							{Name: "HOME", Value: mountTmp},
						},
						LivenessProbe:  liveness,
						ReadinessProbe: probe(2),
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: *pk.CPU, corev1.ResourceMemory: *pk.Memory},
							Limits:   corev1.ResourceList{corev1.ResourceMemory: *pk.Memory},
						},
						SecurityContext: containerSecurityContext(),
						VolumeMounts: []corev1.VolumeMount{
							{Name: "config", MountPath: pickerConfigDir, ReadOnly: true},
							{Name: volumeTmp, MountPath: mountTmp},
						},
					}},
					Volumes: []corev1.Volume{
						{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: pickerName(s)},
						}}},
						tmpVolume(),
					},
				},
			},
		},
	}
}

// renderPickerService builds the Service the pool's endpointPickerRef
// names: the gRPC ext-proc port the Gateway calls, and the metrics port.
func renderPickerService(s *resolvedSpec) *corev1.Service {
	port := func(name string, n int32) corev1.ServicePort {
		return corev1.ServicePort{Name: name, Port: n, TargetPort: intstr.FromInt32(n), Protocol: corev1.ProtocolTCP}
	}
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: pickerMeta(s),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: pickerSelector(s),
			Ports:    []corev1.ServicePort{port("grpc-ext-proc", int32(pickerGRPCPort)), port("http-metrics", pickerMetrics)},
		},
	}
}

// renderPickerServiceAccount builds the picker's identity. It holds only
// the picker's Role.
func renderPickerServiceAccount(s *resolvedSpec) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: pickerMeta(s),
	}
}

// pickerRules are what the picker reads, upstream's Role for a v1 pool:
// its pool, the InferenceObjectives of the namespace, and the pods it
// picks from. Read-only, and only in the claim's namespace (a Role, never
// a ClusterRole). Crossplane must hold these permissions itself to grant
// them (apis/rbac.yaml).
func pickerRules() []rbacv1.PolicyRule {
	read := []string{"get", "watch", "list"}
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"inference.networking.x-k8s.io"}, Resources: []string{"inferenceobjectives"}, Verbs: read},
		{APIGroups: []string{inferencev1.GroupVersion.Group}, Resources: []string{"inferencepools"}, Verbs: read},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: read},
	}
}

// renderPickerRole builds the picker's Role in the claim's namespace.
func renderPickerRole(s *resolvedSpec) *rbacv1.Role {
	return &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"},
		ObjectMeta: pickerMeta(s),
		Rules:      pickerRules(),
	}
}

// renderPickerRoleBinding grants the picker's Role to its ServiceAccount,
// both in the claim's namespace.
func renderPickerRoleBinding(s *resolvedSpec) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
		ObjectMeta: pickerMeta(s),
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: pickerName(s), Namespace: s.Namespace}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: pickerName(s)},
	}
}

// renderPickerConfig builds the ConfigMap of the picker's
// EndpointPickerConfig (input.traffic.gateway.inferenceExtension.picker.config).
func renderPickerConfig(s *resolvedSpec) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: pickerMeta(s),
		Data:       map[string]string{pickerConfigKey: s.Pool.Picker.Config},
	}
}
