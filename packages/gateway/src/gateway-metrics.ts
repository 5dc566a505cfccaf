import { Counter, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import type { AgentWriteMetrics } from './agent-write-handler.js';
import type { IngestMetrics } from './ingest-handler.js';

export type GatewayMetrics = IngestMetrics &
  AgentWriteMetrics & {
    observeRequest(status: number, seconds: number): void;
    observeAgentWrite(protocol: string, status: number, seconds: number): void;
    rateLimitStoreError(): void;
  };

/** The ingest figures of the contract (requests, latency, samples accepted), in `registry`. */
export function createGatewayMetrics(registry: Registry): GatewayMetrics {
  const requests = new Counter({
    name: 'ingest_requests_total',
    help: 'POST /api/v1/ingest requests answered, by status.',
    labelNames: ['status'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'ingest_request_duration_seconds',
    help: 'Time to answer POST /api/v1/ingest, including the Kafka acknowledgement.',
    labelNames: ['status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const samples = new Counter({
    name: 'ingest_samples_accepted_total',
    help: 'Metric samples acknowledged to agents (the sum of events_accepted).',
    registers: [registry],
  });
  const payloads = new Counter({
    name: 'ingest_payloads_accepted_total',
    help: 'Host payloads acknowledged to agents (one Kafka message each).',
    registers: [registry],
  });
  const storeErrors = new Counter({
    name: 'ingest_rate_limit_store_errors_total',
    help: 'Ingest requests admitted without a rate-limit check because Redis failed (fail open).',
    registers: [registry],
  });
  const agentRequests = new Counter({
    name: 'agent_write_requests_total',
    help: 'Writes of the agent protocols (remote_write, otlp, influx, collectd) answered, by status.',
    labelNames: ['protocol', 'status'],
    registers: [registry],
  });
  const agentDuration = new Histogram({
    name: 'agent_write_request_duration_seconds',
    help: 'Time to answer a write of an agent protocol, including the bus acknowledgement.',
    labelNames: ['protocol'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const agentPoints = new Counter({
    name: 'agent_write_points_total',
    help: 'Points of agent-protocol writes: accepted, rejected (by reason: the sender gets a 400 when none is taken) or skipped by design (staleness markers, histograms, string fields).',
    labelNames: ['protocol', 'outcome', 'reason'],
    registers: [registry],
  });
  const seriesRefused = new Counter({
    name: 'series_refused_points_total',
    help: 'Points refused by the series limits (SERIES_MAX_*), by reason: too_many_labels, label_name_too_long, label_value_too_long, new_series_limit.',
    labelNames: ['reason'],
    registers: [registry],
  });
  return {
    seriesRefused(reason, count) {
      seriesRefused.inc({ reason }, count);
    },
    points(protocol, outcome, reason, count) {
      agentPoints.inc({ protocol, outcome, reason }, count);
    },
    observeAgentWrite(protocol, status, seconds) {
      agentRequests.inc({ protocol, status: String(status) });
      agentDuration.observe({ protocol }, seconds);
    },
    accepted(payloadCount, sampleCount) {
      payloads.inc(payloadCount);
      samples.inc(sampleCount);
    },
    rejected: () => undefined,
    observeRequest(status, seconds) {
      const labels = { status: String(status) };
      requests.inc(labels);
      duration.observe(labels, seconds);
    },
    rateLimitStoreError: () => storeErrors.inc(),
  };
}
