package fn

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// resourceService is the composition resource name of the Service.
const resourceService = "service"

// servicePort is the port clients call, whatever the runtime listens on.
const servicePort = int32(80)

// renderService builds the ClusterIP Service in front of the servers. It is
// named after the claim, so its DNS name is the one the app team expects.
// In a split it selects the servers of every version, so requests spread
// over all of them: the split follows the number of servers per version.
// So it does while versions that left the spec keep their servers
// (departing), e.g. a promoted canary's warm servers until the primary
// serves the new weights on its full count.
func renderService(s *resolvedSpec, departing bool) *corev1.Service {
	sel := s.selector()
	switch {
	case s.groups():
		// Only the leaders serve; the workers run Ray.
		sel = s.leaderSelector()
	case s.Split || departing:
		sel = s.splitSelector()
	}
	return clusterIPService(s, s.Name, s.labels(s.primary(), componentServer), sel)
}

// renderVersionService builds the Service that reaches version v's servers
// alone (versionSelector): the backend an HTTPRoute weighs, and a way to
// call one version directly.
func renderVersionService(s *resolvedSpec, v *modelVersion) *corev1.Service {
	return clusterIPService(s, v.versionServiceName(s), s.labels(v, v.component()), v.versionSelector(s))
}

func clusterIPService(s *resolvedSpec, name string, labels, selector map[string]string) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.Namespace, Labels: labels},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: selector,
			Ports: []corev1.ServicePort{{
				Name:       portName,
				Port:       servicePort,
				TargetPort: intstr.FromString(portName),
				Protocol:   corev1.ProtocolTCP,
			}},
		},
	}
}

// serviceURL is the in-cluster address of the Service.
func serviceURL(s *resolvedSpec) string { return serviceURLOf(s.Name, s.Namespace) }

func serviceURLOf(name, namespace string) string {
	return fmt.Sprintf("http://%s.%s.svc.cluster.local:%d", name, namespace, servicePort)
}
