package observe

import (
	"fmt"
	"strconv"
	"time"

	"github.com/inferno-ai/function-inferno/input/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// ProgressReport is what a pull pod last wrote into its ConfigMap. The
// data is the pod's, and whoever may write ConfigMaps in the namespace
// can write it too: every field is checked, and one that does not read
// is left out rather than refused (it is a report, not a spec).
type ProgressReport struct {
	Bytes, Total, Rate   *int64
	StartedAt, UpdatedAt string
}

// maxReportedBytes bounds the integers a report may carry: 1 PiB, far
// beyond any weights, well within what status fields and float formatting
// hold exactly.
const maxReportedBytes = int64(1) << 50

// ReadProgress reads a pull's observed ConfigMap; nil without one or
// before the pod's first report.
func ReadProgress(cm *corev1.ConfigMap) *ProgressReport {
	if cm == nil || len(cm.Data) == 0 {
		return nil
	}
	count := func(key string) *int64 {
		n, err := strconv.ParseInt(cm.Data[key], 10, 64)
		if err != nil || n < 0 || n > maxReportedBytes {
			return nil
		}
		return &n
	}
	when := func(key string) string {
		t, err := time.Parse(time.RFC3339, cm.Data[key])
		if err != nil {
			return ""
		}
		return t.UTC().Format(time.RFC3339)
	}
	r := &ProgressReport{Bytes: count(v1beta1.ProgressBytes), Total: count(v1beta1.ProgressTotal), Rate: count(v1beta1.ProgressRate),
		StartedAt: when(v1beta1.ProgressStartedAt), UpdatedAt: when(v1beta1.ProgressUpdatedAt)}
	if r.Bytes == nil {
		return nil
	}
	// A total below what is done is a total that does not hold (a
	// redirect's, a retry's): unknown.
	if r.Total != nil && *r.Total < *r.Bytes {
		r.Total = nil
	}
	return r
}

// Eta is the seconds left at the reported rate, nil when the total or a
// rate is unknown.
func (r *ProgressReport) Eta() *int64 {
	if r.Total == nil || r.Rate == nil || *r.Rate == 0 {
		return nil
	}
	left := *r.Total - *r.Bytes
	return ptr.To((left + *r.Rate - 1) / *r.Rate)
}

// Words says the report as the WeightsReady message does: "3.1 of 15.0
// GiB, 120 MiB/s, ETA 2m"; without a total "3.1 GiB so far, 120 MiB/s".
func (r *ProgressReport) Words() string {
	var msg string
	if r.Total != nil {
		unit := byteUnit(*r.Total)
		msg = fmt.Sprintf("%s of %s %s", inUnit(*r.Bytes, unit), inUnit(*r.Total, unit), unit.name)
		if *r.Total > 0 {
			msg += fmt.Sprintf(" (%d%%)", *r.Bytes*100 / *r.Total)
		}
	} else {
		unit := byteUnit(*r.Bytes)
		msg = fmt.Sprintf("%s %s so far", inUnit(*r.Bytes, unit), unit.name)
	}
	if r.Rate != nil {
		unit := byteUnit(*r.Rate)
		msg += fmt.Sprintf(", %s %s/s", inUnit(*r.Rate, unit), unit.name)
	}
	if eta := r.Eta(); eta != nil {
		msg += ", ETA " + Duration(*eta)
	}
	return msg
}

// unit is a binary byte unit.
type unit struct {
	name string
	size int64
}

var units = []unit{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}

// byteUnit is the largest unit n has at least one of; bytes below a KiB.
func byteUnit(n int64) unit {
	for _, u := range units {
		if n >= u.size {
			return u
		}
	}
	return unit{"B", 1}
}

// inUnit writes n in u with one decimal, bytes as a whole number.
func inUnit(n int64, u unit) string {
	if u.size == 1 {
		return strconv.FormatInt(n, 10)
	}
	// Tenths, rounded down, in integers: the same report always reads
	// the same.
	tenths := n * 10 / u.size
	return fmt.Sprintf("%d.%d", tenths/10, tenths%10)
}

// Duration writes seconds as 45s, 2m, 1h5m: an estimate, rounded up to
// what a reader acts on.
func Duration(s int64) string {
	switch {
	case s < 90:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm", (s+59)/60)
	default:
		m := (s + 59) / 60
		return fmt.Sprintf("%dh%dm", m/60, m%60)
	}
}
