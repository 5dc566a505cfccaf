// A program exposing native histograms through the Prometheus Go client library, as services
// instrumented with it do, for the native-histogram tests: a Prometheus 2.42 with
// --enable-feature=native-histograms scrapes it (protobuf exposition) and remote-writes what it
// scraped. It observes on its own, steadily, until it is stopped: request latencies (positive,
// spread over many buckets) and temperature changes (either sign, some within the zero bucket).
package main

import (
	"flag"
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
	}, []string{"route"})
	change := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:                         "temperature_change_celsius",
		Help:                         "Changes of a temperature between readings.",
		NativeHistogramBucketFactor:  1.5,
		NativeHistogramZeroThreshold: 0.01,
	})
	registry.MustRegister(latency, change)

	go func() {
		random := rand.New(rand.NewSource(58))
		for range time.Tick(5 * time.Millisecond) {
			latency.WithLabelValues("/pay").Observe(0.02 * math.Exp(random.NormFloat64()))
			if random.Intn(3) == 0 {
				latency.WithLabelValues("/cart").Observe(0.005 * math.Exp(0.5*random.NormFloat64()))
			}
			change.Observe(random.NormFloat64() * 0.5)
		}
	}()

	http.Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	log.Printf("serving on %s", *listen)
	log.Fatal(http.ListenAndServe(*listen, nil))
}
