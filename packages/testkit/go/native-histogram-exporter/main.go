// A program exposing native histograms through the Prometheus Go client library, as services
// instrumented with it do, for the native-histogram tests: a Prometheus 2.42 with
// --enable-feature=native-histograms scrapes it (protobuf exposition) and remote-writes what it
// scraped. It observes on its own, steadily, until it is stopped: request latencies (positive,
// spread over many buckets, each with a trace id as its exemplar, which the client keeps per
// classic bucket) and temperature changes (either sign, some within the zero bucket).
package main

import (
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to serve /metrics on")
	flag.Parse()

	registry := prometheus.NewRegistry()
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:                        "checkout_latency_seconds",
		Help:                        "Checkout request latency.",
		NativeHistogramBucketFactor: 1.1,
		// Classic buckets too: Prometheus 2.42 takes a native histogram's exemplars from them.
		Buckets: prometheus.DefBuckets,
	}, []string{"route"})
	change := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:                         "temperature_change_celsius",
		Help:                         "Changes of a temperature between readings.",
		NativeHistogramBucketFactor:  1.5,
		NativeHistogramZeroThreshold: 0.01,
	})
	registry.MustRegister(latency, change)
	// Exemplars are exposed in the protobuf format, which a Prometheus with native histograms
	// asks for.
	handler := promhttp.HandlerFor(registry, promhttp.HandlerOpts{EnableOpenMetrics: true})

	go func() {
		random := rand.New(rand.NewSource(58))
		for tick := 0; ; tick++ {
			time.Sleep(5 * time.Millisecond)
			pay := latency.WithLabelValues("/pay").(prometheus.ExemplarObserver)
			trace := prometheus.Labels{"trace_id": fmt.Sprintf("%032x", tick)}
			pay.ObserveWithExemplar(0.02*math.Exp(random.NormFloat64()), trace)
			if random.Intn(3) == 0 {
				latency.WithLabelValues("/cart").Observe(0.005 * math.Exp(0.5*random.NormFloat64()))
			}
			change.Observe(random.NormFloat64() * 0.5)
		}
	}()

	http.Handle("/metrics", handler)
	log.Printf("serving on %s", *listen)
	log.Fatal(http.ListenAndServe(*listen, nil))
}
