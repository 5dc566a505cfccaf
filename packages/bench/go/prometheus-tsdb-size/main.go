// Prometheus' own TSDB (the tsdb package of Prometheus 2.42, module v0.42.0) given native
// histograms, for the histogram storage benchmark: it appends the series read as JSON from stdin
// in time order, as a scraping Prometheus would, compacts the head into a block, and prints the
// block's sizes as JSON.
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"

	"github.com/go-kit/log"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
)

type span struct {
	Offset int32  `json:"offset"`
	Length uint32 `json:"length"`
}

// The benchmark's NativeHistogram (absolute counts), as its JSON spells it.
type nativeHistogram struct {
	Schema          int32     `json:"schema"`
	ZeroThreshold   float64   `json:"zeroThreshold"`
	ZeroCount       float64   `json:"zeroCount"`
	Count           float64   `json:"count"`
	Sum             float64   `json:"sum"`
	PositiveSpans   []span    `json:"positiveSpans"`
	PositiveBuckets []float64 `json:"positiveBuckets"`
	NegativeSpans   []span    `json:"negativeSpans"`
	NegativeBuckets []float64 `json:"negativeBuckets"`
	CounterReset    string    `json:"counterResetHint"`
}

type sample struct {
	T int64           `json:"timeMs"`
	H nativeHistogram `json:"histogram"`
}

type series struct {
	Labels  map[string]string `json:"labels"`
	Samples []sample          `json:"samples"`
}

type sizes struct {
	Histograms int   `json:"histograms"`
	Chunks     int64 `json:"chunkBytes"`
	Index      int64 `json:"indexBytes"`
	Block      int64 `json:"blockBytes"`
}

func spans(in []span) []histogram.Span {
	out := make([]histogram.Span, len(in))
	for i, s := range in {
		out[i] = histogram.Span{Offset: s.Offset, Length: s.Length}
	}
	return out
}

// Absolute counts as the integer histogram's deltas.
func deltas(counts []float64) []int64 {
	out := make([]int64, len(counts))
	var previous int64
	for i, c := range counts {
		out[i] = int64(c) - previous
		previous = int64(c)
	}
	return out
}

func hint(name string) histogram.CounterResetHint {
	switch name {
	case "yes":
		return histogram.CounterReset
	case "no":
		return histogram.NotCounterReset
	case "gauge":
		return histogram.GaugeType
	}
	return histogram.UnknownCounterReset
}

func dirSize(dir string) int64 {
	var total int64
	_ = filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			total += info.Size()
		}
		return nil
	})
	return total
}

func main() {
	var input []series
	if err := json.NewDecoder(os.Stdin).Decode(&input); err != nil {
		fail(err)
	}
	dir, err := os.MkdirTemp("", "prometheus-tsdb-size")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	options := tsdb.DefaultOptions()
	options.EnableNativeHistograms = true
	db, err := tsdb.Open(dir, log.NewNopLogger(), nil, options, nil)
	if err != nil {
		fail(err)
	}
	// Every series' samples in one time order: the head takes nothing older than its newest
	// hour, as a scraping Prometheus never sends.
	type point struct {
		series int
		sample sample
	}
	var points []point
	for i, s := range input {
		for _, p := range s.Samples {
			points = append(points, point{i, p})
		}
	}
	sort.SliceStable(points, func(a, b int) bool { return points[a].sample.T < points[b].sample.T })
	sets := make([]labels.Labels, len(input))
	for i, s := range input {
		sets[i] = labels.FromMap(s.Labels)
	}
	refs := make([]storage.SeriesRef, len(input))
	minT, maxT := int64(math.MaxInt64), int64(math.MinInt64)
	app := db.Appender(nil)
	for n, p := range points {
		h := p.sample.H
		hist := &histogram.Histogram{
			CounterResetHint: hint(h.CounterReset),
			Schema:           h.Schema,
			ZeroThreshold:    h.ZeroThreshold,
			ZeroCount:        uint64(h.ZeroCount),
			Count:            uint64(h.Count),
			Sum:              h.Sum,
			PositiveSpans:    spans(h.PositiveSpans),
			PositiveBuckets:  deltas(h.PositiveBuckets),
			NegativeSpans:    spans(h.NegativeSpans),
			NegativeBuckets:  deltas(h.NegativeBuckets),
		}
		ref, err := app.AppendHistogram(refs[p.series], sets[p.series], p.sample.T, hist, nil)
		if err != nil {
			fail(fmt.Errorf("series %d at %d: %w", p.series, p.sample.T, err))
		}
		refs[p.series] = ref
		if p.sample.T < minT {
			minT = p.sample.T
		}
		if p.sample.T > maxT {
			maxT = p.sample.T
		}
		if n%10_000 == 9_999 {
			if err := app.Commit(); err != nil {
				fail(err)
			}
			app = db.Appender(nil)
		}
	}
	if err := app.Commit(); err != nil {
		fail(err)
	}
	if err := db.CompactHead(tsdb.NewRangeHead(db.Head(), minT, maxT)); err != nil {
		fail(err)
	}
	result := sizes{Histograms: len(points)}
	for _, block := range db.Blocks() {
		blockDir := block.Dir()
		result.Chunks += dirSize(filepath.Join(blockDir, "chunks"))
		result.Index += dirSize(filepath.Join(blockDir, "index"))
		result.Block += dirSize(blockDir)
	}
	if err := db.Close(); err != nil {
		fail(err)
	}
	if err := json.NewEncoder(os.Stdout).Encode(result); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
