//go:build e2e

package e2e

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"
)

// summary collects one row per scenario for the table printed at the end.
type summary struct {
	mu   sync.Mutex
	rows []summaryRow
}

type summaryRow struct {
	scenario string
	result   string
	// nodes says where the scenario's pods ran: "kwok" (fake containers),
	// "real" (containers on the real node) or both.
	nodes string
	took  time.Duration
	notes []string
}

// scenario is the handle a test uses to record its row. Start it at the
// top of a (sub)test; notes are measurements worth reading in the table.
type scenario struct {
	t     *testing.T
	s     *summary
	start time.Time
	nodes string
	notes []string
}

func (s *summary) start(t *testing.T, name string) *scenario {
	sc := &scenario{t: t, s: s, start: time.Now(), nodes: "kwok"}
	t.Cleanup(func() {
		result := "PASS"
		switch {
		case t.Skipped():
			result = "SKIP"
		case t.Failed():
			result = "FAIL"
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.rows = append(s.rows, summaryRow{scenario: name, result: result, nodes: sc.nodes, took: time.Since(sc.start), notes: sc.notes})
	})
	return sc
}

// onRealNode marks the scenario's row: its pods ran as real containers
// (alone, or with kwok's too when both is set).
func (sc *scenario) onRealNode(both bool) {
	sc.nodes = "real"
	if both {
		sc.nodes = "real+kwok"
	}
}

// note records a measurement or fact for the summary and logs it.
func (sc *scenario) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	sc.notes = append(sc.notes, msg)
	sc.t.Log(msg)
}

func (s *summary) print(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\n=== e2e summary")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tRESULT\tNODES\tTIME\tNOTES")
	pass, fail, skip := 0, 0, 0
	for _, r := range s.rows {
		switch r.result {
		case "PASS":
			pass++
		case "FAIL":
			fail++
		default:
			skip++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.scenario, r.result, r.nodes, r.took.Round(100*time.Millisecond), strings.Join(r.notes, "; "))
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "scenarios: %d passed, %d failed, %d skipped\n", pass, fail, skip)
}
