package render

import (
	"fmt"

	"github.com/inferno-ai/function-inferno/internal/resolve"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// PickerService builds the Service the pool's endpointPickerRef
// names: the gRPC ext-proc port the Gateway calls, and the metrics port.
func PickerService(s *resolve.Spec) *corev1.Service {
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

// ServiceReady reports whether the Service is ready:
//  1. it exists;
//  2. a LoadBalancer Service also has an ingress address.
func ServiceReady(svc *corev1.Service) bool {
	if svc == nil {
		return false
	}
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		return len(svc.Status.LoadBalancer.Ingress) > 0
	}
	return true
}

// ResourceService is the composition resource name of the Service.
const ResourceService = "service"

// ServicePort is the port clients call, whatever the runtime listens on.
const ServicePort = int32(80)

// Service builds the ClusterIP Service in front of the servers. It is
// named after the claim, so its DNS name is the one the app team expects.
// In a split it selects the servers of every version, so requests spread
// over all of them: the split follows the number of servers per version.
// So it does while versions that left the spec keep their servers
// (departing), e.g. a promoted canary's warm servers until the primary
// serves the new weights on its full count.
func Service(s *resolve.Spec, departing bool) *corev1.Service {
	sel := s.Selector()
	switch {
	case s.Groups():
		// Only the leaders serve; the workers run Ray.
		sel = LeaderSelector(s)
	case s.Split || departing:
		sel = s.SplitSelector()
	}
	return clusterIPService(s, s.Name, s.Labels(s.Primary(), resolve.ComponentServer), sel)
}

// VersionService builds the Service that reaches version v's servers
// alone (versionSelector): the backend an HTTPRoute weighs, and a way to
// call one version directly.
func VersionService(s *resolve.Spec, v *resolve.Version) *corev1.Service {
	return clusterIPService(s, v.VersionServiceName(s), s.Labels(v, v.Component()), v.VersionSelector(s))
}

func clusterIPService(s *resolve.Spec, name string, labels, selector map[string]string) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.Namespace, Labels: labels},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: selector,
			Ports: []corev1.ServicePort{{
				Name:       PortName,
				Port:       ServicePort,
				TargetPort: intstr.FromString(PortName),
				Protocol:   corev1.ProtocolTCP,
			}},
		},
	}
}

// ServiceURL is the in-cluster address of the Service.
func ServiceURL(s *resolve.Spec) string { return ServiceURLOf(s.Name, s.Namespace) }

// ServiceURLOf is the in-cluster address of the Service of that name: the
// main Service's (ServiceURL) or a version's own, which status reports for
// each version of a split.
func ServiceURLOf(name, namespace string) string {
	return fmt.Sprintf("http://%s.%s.svc.cluster.local:%d", name, namespace, ServicePort)
}

// ServiceResource is the composition resource name of version v's own
// Service (VersionService), always suffixed with the version: unlike the
// other per-version names, the primary's is not the unsuffixed
// ResourceService, which is the main Service's.
func ServiceResource(v *resolve.Version) string {
	return ResourceService + "-" + v.Model.Version
}
