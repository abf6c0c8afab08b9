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
func renderService(s *service) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, Labels: s.labels(componentServer)},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: s.selector(),
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
func serviceURL(s *service) string {
	return fmt.Sprintf("http://%s.%s.svc.cluster.local:%d", s.Name, s.Namespace, servicePort)
}
