package main

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// RunningMetric is the gauge of in-flight completion requests. The `fake`
// runtime preset names it as its ConcurrencyMetric (a test keeps them
// equal): it is what an autoscaler on concurrency reads.
const RunningMetric = "inferno_fake_requests_running"

// metrics live in a registry of their own, not the global one, so that two
// servers in one test process do not share counts.
type metrics struct {
	registry *prometheus.Registry
	running  prometheus.Gauge
	requests *prometheus.CounterVec
	tokens   *prometheus.CounterVec
	duration *prometheus.HistogramVec
	weights  *prometheus.GaugeVec
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		running: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: RunningMetric,
			Help: "Completion requests being answered now, streams included.",
		}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "inferno_fake_requests_total",
			Help: "Requests answered, by endpoint and HTTP status code.",
		}, []string{"endpoint", "code"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "inferno_fake_tokens_total",
			Help: "Tokens (words) read from prompts and generated in completions.",
		}, []string{"kind"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "inferno_fake_request_duration_seconds",
			Help: "Time to answer a request, by endpoint; with --token-delay it grows with max_tokens.",
			// 1 ms to about 24 s: a bare answer takes well under a
			// millisecond, a long generation with a token delay seconds.
			Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 12),
		}, []string{"endpoint"}),
		weights: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "inferno_fake_weights_info",
			Help: "1 for the weights being served, labelled with their digest and the model version.",
		}, []string{"digest", "version"}),
	}
	m.registry.MustRegister(m.running, m.requests, m.tokens, m.duration, m.weights,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Both kinds exist from the start, so a rate() over them never starts
	// from a missing series.
	m.tokens.WithLabelValues("prompt")
	m.tokens.WithLabelValues("completion")
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}
