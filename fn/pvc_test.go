package fn

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/internal/reason"
	"github.com/inferno-ai/function-inferno/internal/render"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// pvcSpec is the part of a rendered PVC the tests compare.
type pvcSpec struct {
	Name, Namespace string
	Class           *string
	Modes           []corev1.PersistentVolumeAccessMode
	Size            string
}

func summarizePVC(p *corev1.PersistentVolumeClaim) pvcSpec {
	q := p.Spec.Resources.Requests[corev1.ResourceStorage]
	return pvcSpec{Name: p.Name, Namespace: p.Namespace, Class: p.Spec.StorageClassName, Modes: p.Spec.AccessModes, Size: q.String()}
}

func TestRenderPVC(t *testing.T) {
	rwo := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	cases := map[string]struct {
		storage map[string]any
		in      map[string]any
		want    pvcSpec
	}{
		"Defaults": {
			want: pvcSpec{Name: "llama-weights", Namespace: "team-a", Modes: rwo, Size: "50Gi"},
		},
		"InputDefaults": {
			in:   map[string]any{"storage": map[string]any{"size": "80Gi", "storageClassName": "standard", "accessMode": "ReadWriteMany"}},
			want: pvcSpec{Name: "llama-weights", Namespace: "team-a", Class: ptr.To("standard"), Modes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}, Size: "80Gi"},
		},
		"ClaimStorage": {
			storage: map[string]any{"size": "120Gi", "storageClassName": "local-path", "accessMode": "ReadWriteMany"},
			in:      map[string]any{"storage": map[string]any{"size": "80Gi", "storageClassName": "standard"}},
			want:    pvcSpec{Name: "llama-weights", Namespace: "team-a", Class: ptr.To("local-path"), Modes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}, Size: "120Gi"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := testXR()
			if tc.storage != nil {
				setPath(xr, tc.storage, "spec", "storage")
			}
			rsp := run(t, newRequest(t, xr, tc.in))
			if msg := fatalMessage(rsp); msg != "" {
				t.Fatalf("fatal: %s", msg)
			}
			got := summarizePVC(desiredObject[corev1.PersistentVolumeClaim](t, rsp, render.ResourcePVC))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PVC (-want +got):\n%s", diff)
			}
			// The typed PVC encodes an empty status, as the standard
			// path does; it must carry nothing in it.
			if st, ok := desiredMap(t, rsp, render.ResourcePVC)["status"]; ok && !cmp.Equal(st, map[string]any{}) {
				t.Errorf("the desired PVC carries a status: %v", st)
			}
		})
	}
}

// TestRenderPVCImmutableFields: class and access modes of an existing
// volume keep their observed values, a shrink keeps the observed size,
// each with a warning; growth is allowed.
func TestRenderPVCImmutableFields(t *testing.T) {
	s := mustResolve(t, func() map[string]any {
		xr := testXR()
		setPath(xr, map[string]any{"size": "50Gi", "storageClassName": "fast", "accessMode": "ReadWriteMany"}, "spec", "storage")
		return xr
	}(), nil)
	observedPVC := func(class string, mode corev1.PersistentVolumeAccessMode, size string) *corev1.PersistentVolumeClaim {
		p := &corev1.PersistentVolumeClaim{}
		if class != "" {
			p.Spec.StorageClassName = ptr.To(class)
		}
		if mode != "" {
			p.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{mode}
		}
		if size != "" {
			p.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}
		}
		return p
	}
	rwx := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
	cases := map[string]struct {
		observed     *corev1.PersistentVolumeClaim
		want         pvcSpec
		wantWarnings []string // the field each warning names
	}{
		"NotObserved": {
			want: pvcSpec{Name: "llama-weights", Namespace: "team-a", Class: ptr.To("fast"), Modes: rwx, Size: "50Gi"},
		},
		"Unchanged": {
			observed: observedPVC("fast", corev1.ReadWriteMany, "50Gi"),
			want:     pvcSpec{Name: "llama-weights", Namespace: "team-a", Class: ptr.To("fast"), Modes: rwx, Size: "50Gi"},
		},
		"ClassDiffers": {
			observed:     observedPVC("standard", corev1.ReadWriteMany, "50Gi"),
			want:         pvcSpec{Name: "llama-weights", Namespace: "team-a", Class: ptr.To("standard"), Modes: rwx, Size: "50Gi"},
			wantWarnings: []string{"spec.storage.storageClassName"},
		},
		"ObservedClassFromClusterDefault": {
			// The claim named a class, the volume has none recorded: nothing
			// to keep.
			observed: observedPVC("", corev1.ReadWriteMany, "50Gi"),
			want:     pvcSpec{Name: "llama-weights", Namespace: "team-a", Class: ptr.To("fast"), Modes: rwx, Size: "50Gi"},
		},
		"AccessModeDiffers": {
			observed:     observedPVC("fast", corev1.ReadWriteOnce, "50Gi"),
			want:         pvcSpec{Name: "llama-weights", Namespace: "team-a", Class: ptr.To("fast"), Modes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, Size: "50Gi"},
			wantWarnings: []string{"spec.storage.accessMode"},
		},
		"ShrinkRefused": {
			observed:     observedPVC("fast", corev1.ReadWriteMany, "100Gi"),
			want:         pvcSpec{Name: "llama-weights", Namespace: "team-a", Class: ptr.To("fast"), Modes: rwx, Size: "100Gi"},
			wantWarnings: []string{"spec.storage.size"},
		},
		"GrowAllowed": {
			observed: observedPVC("fast", corev1.ReadWriteMany, "20Gi"),
			want:     pvcSpec{Name: "llama-weights", Namespace: "team-a", Class: ptr.To("fast"), Modes: rwx, Size: "50Gi"},
		},
		"EverythingDiffers": {
			observed:     observedPVC("slow", corev1.ReadWriteOnce, "1Ti"),
			want:         pvcSpec{Name: "llama-weights", Namespace: "team-a", Class: ptr.To("slow"), Modes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, Size: "1Ti"},
			wantWarnings: []string{"spec.storage.storageClassName", "spec.storage.accessMode", "spec.storage.size"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pvc, warnings := render.PVC(s, tc.observed)
			if diff := cmp.Diff(tc.want, summarizePVC(pvc)); diff != "" {
				t.Errorf("PVC (-want +got):\n%s", diff)
			}
			var fields []string
			for _, w := range warnings {
				f, _, _ := strings.Cut(w, ":")
				fields = append(fields, f)
			}
			if diff := cmp.Diff(tc.wantWarnings, fields); diff != "" {
				t.Errorf("warnings (-want +got):\n%s\n%q", diff, warnings)
			}
		})
	}
}

// TestPVCWarningsReachTheResponse: the immutable-field warnings come out of
// RunFunction as Warning results on the composite and the claim.
func TestPVCWarningsReachTheResponse(t *testing.T) {
	xr := testXR()
	setPath(xr, map[string]any{"size": "10Gi", "storageClassName": "fast"}, "spec", "storage")
	fresh := run(t, newRequest(t, xr, nil))
	pvc := observedFrom(t, fresh, render.ResourcePVC, pvcPhase("Bound"))
	setPath(pvc.Object, "standard", "spec", "storageClassName")
	setPath(pvc.Object, "40Gi", "spec", "resources", "requests", "storage")

	rsp := run(t, newRequest(t, xr, nil, pvc))
	got := summarizePVC(desiredObject[corev1.PersistentVolumeClaim](t, rsp, render.ResourcePVC))
	want := pvcSpec{Name: "llama-weights", Namespace: "team-a", Class: ptr.To("standard"), Modes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, Size: "40Gi"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PVC (-want +got):\n%s", diff)
	}
	for _, field := range []string{"spec.storage.storageClassName", "spec.storage.size"} {
		r, ok := warningWith(rsp, field)
		if !ok {
			t.Errorf("no warning names %s; have %q", field, warningsOf(rsp))
			continue
		}
		if diff := cmp.Diff(toBoth, r.GetTarget()); diff != "" {
			t.Errorf("%s warning target (-want +got):\n%s", field, diff)
		}
	}
	if r, ok := warningWith(rsp, "spec.storage.size"); ok && !strings.Contains(r.GetMessage(), "cannot shrink") {
		t.Errorf("shrink warning %q does not say it cannot shrink", r.GetMessage())
	}
}

// TestPVCPendingDoesNotBlockJob: a WaitForFirstConsumer volume stays
// Pending until the pull Job's pod mounts it, so the Job is rendered
// regardless (DESIGN §4).
func TestPVCPendingDoesNotBlockJob(t *testing.T) {
	xr := testXR()
	fresh := run(t, newRequest(t, xr, nil))
	job := pullJobResource(t, fresh)
	cases := map[string]struct {
		observed []observedObject
		wantPVC  fnv1Ready
	}{
		"PVCNotObserved":   {wantPVC: readyFalse},
		"PVCWithoutStatus": {observed: []observedObject{observedFrom(t, fresh, render.ResourcePVC, nil)}, wantPVC: readyFalse},
		"PVCPending":       {observed: []observedObject{observedFrom(t, fresh, render.ResourcePVC, pvcPhase("Pending"))}, wantPVC: readyFalse},
		"PVCPendingJobToo": {observed: []observedObject{observedFrom(t, fresh, render.ResourcePVC, pvcPhase("Pending")), observedFrom(t, fresh, job, jobRunningStatus())}, wantPVC: readyFalse},
		"PVCBound":         {observed: []observedObject{observedFrom(t, fresh, render.ResourcePVC, pvcPhase("Bound"))}, wantPVC: readyTrue},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, newRequest(t, xr, nil, tc.observed...))
			if diff := cmp.Diff([]string{job, render.ResourcePVC}, desiredNames(rsp)); diff != "" {
				t.Errorf("desired (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPVC, readiness(rsp, render.ResourcePVC)); diff != "" {
				t.Errorf("PVC readiness (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("PendingExplainedWhilePulling", func(t *testing.T) {
		rsp := run(t, newRequest(t, xr, nil, observedFrom(t, fresh, render.ResourcePVC, pvcPhase("Pending")), observedFrom(t, fresh, job, jobRunningStatus())))
		if msg := conditionMessage(rsp, reason.ConditionWeightsReady); !strings.Contains(msg, "WaitForFirstConsumer") {
			t.Errorf("WeightsReady message %q does not explain the Pending volume", msg)
		}
	})
}

// TestNoPVCForPVCModels: pvc:// models mount the user's claim; no cache
// volume and no pull Job are rendered.
func TestNoPVCForPVCModels(t *testing.T) {
	xr := testXR()
	setPath(xr, "pvc://shared-models/llama", "spec", "model", "uri")
	setPath(xr, map[string]any{"size": "10Gi"}, "spec", "storage")
	rsp := run(t, newRequest(t, xr, nil))
	if diff := cmp.Diff([]string{render.ResourceDeployment, render.ResourceService}, desiredNames(rsp)); diff != "" {
		t.Errorf("desired (-want +got):\n%s", diff)
	}
}
