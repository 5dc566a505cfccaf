/**
 * `npm run bench:encoding`: what a host sample costs on the bus in each candidate encoding, per
 * message: the gateway's encode, the writer's and evaluator's decode (what they use: every field
 * but the snapshot lists, which storage takes as JSON text), and the bytes. Same messages for
 * every encoding: the compare benchmark's hosts (3 metrics, 3 tags) and `bench:ingest`'s
 * spec-shaped ones (containers and processes).
 *
 * Steps: `seed` builds the messages, `measure` times each encoding over them; nothing to start.
 */
import protobuf from 'protobufjs';
import type { SampleMessage } from '@monitor/schemas';
import {
  decodeHostSample,
  encodeBinarySampleMessage,
  encodeSampleMessage,
  parseIngestBody,
} from '@monitor/schemas';
import { integerOption } from './harness/command-line.js';
import type { ReportBase } from './harness/report.js';
import { createCompareFleet } from './compare-fleet.js';
import { createFleet } from './fleet.js';
import type { BenchContext } from './harness/run-bench.js';
import { runBench } from './harness/run-bench.js';
import { formatNotes } from './report-text.js';

type Candidate = {
  name: string;
  encode(message: SampleMessage): Uint8Array;
  /** Returns something that depends on every decoded field, so nothing is optimised away. */
  decode(value: Buffer): number;
};

/** A protobuf shape of the same message, the snapshot lists kept as JSON text (storage's form). */
const sampleProto = protobuf.Root.fromJSON(<protobuf.INamespace>{
  nested: {
    Sample: {
      fields: {
        orgId: { type: 'string', id: 1 },
        host: { type: 'string', id: 2 },
        timeMs: { type: 'double', id: 3 },
        receivedMs: { type: 'double', id: 4 },
        metrics: { keyType: 'string', type: 'double', id: 5 },
        tags: { keyType: 'string', type: 'string', id: 6 },
        containersJson: { type: 'string', id: 7 },
        processesJson: { type: 'string', id: 8 },
      },
    },
  },
}).lookupType('Sample');

type ProtoSample = {
  orgId: string;
  host: string;
  timeMs: number;
  receivedMs: number;
  metrics: Record<string, number>;
  tags: Record<string, string>;
  containersJson: string;
  processesJson: string;
};

/** The pipeline's own decoder, which reads either encoding. */
function decodeWeighed(value: Buffer): number {
  const decoded = decodeHostSample(value);
  if (!decoded.ok) throw new Error(decoded.reason);
  return weigh(decoded.value);
}

const candidates: Candidate[] = [
  { name: 'json v1', encode: encodeSampleMessage, decode: decodeWeighed },
  { name: 'binary v1 (the default)', encode: encodeBinarySampleMessage, decode: decodeWeighed },
  {
    name: 'protobufjs',
    encode(message) {
      return sampleProto
        .encode({
          orgId: message.org_id,
          host: message.host,
          timeMs: message.time_ms,
          receivedMs: message.received_ms,
          metrics: message.metrics,
          tags: message.tags,
          containersJson: message.containers.length > 0 ? JSON.stringify(message.containers) : '',
          processesJson: message.processes.length > 0 ? JSON.stringify(message.processes) : '',
        })
        .finish();
    },
    decode(value) {
      const sample = sampleProto.decode(value) as unknown as ProtoSample;
      return weigh({
        ...sample,
        containers: { json: sample.containersJson },
        processes: { json: sample.processesJson },
      });
    },
  },
];

function weigh(sample: {
  host: string;
  timeMs: number;
  metrics: Record<string, number>;
  tags: Record<string, string>;
  containers: unknown;
  processes: unknown;
}): number {
  let weight = sample.host.length + sample.timeMs;
  for (const value of Object.values(sample.metrics)) weight += value;
  for (const value of Object.values(sample.tags)) weight += value.length;
  return weight + (sample.containers === undefined ? 0 : 1);
}

function messagesOf(bodies: Buffer[]): SampleMessage[] {
  const messages: SampleMessage[] = [];
  const receivedMs = Date.now();
  for (const body of bodies) {
    const parsed = parseIngestBody(JSON.parse(body.toString('utf8')));
    if (!parsed.success) throw new Error(`a fleet body does not validate: ${parsed.error.message}`);
    for (const payload of parsed.data) {
      messages.push({
        v: 1,
        org_id: 'org_01JBENCH0000000000000000',
        host: payload.host,
        time_ms: payload.timestamp === undefined ? receivedMs : Date.parse(payload.timestamp),
        received_ms: receivedMs,
        metrics: payload.metrics,
        tags: payload.tags ?? {},
        containers: payload.docker_containers ?? [],
        processes: payload.processes ?? [],
      });
    }
  }
  return messages;
}

type Workload = { name: string; messages: SampleMessage[] };

function workloads(count: number): Workload[] {
  const baseTimeMs = Date.now() - 60_000;
  const compare = createCompareFleet({ hostCount: 10_000, valueVariants: 4 });
  const spec = createFleet({ hostCount: 10_000, baseTimeMs });
  const specSource = spec.createBodySource({ payloadsPerRequest: 1, slots: 1 });
  const take = (next: () => Buffer): Buffer[] =>
    Array.from({ length: count }, () => Buffer.from(next()));
  return [
    {
      name: '1 host, 3 metrics, 3 tags',
      messages: messagesOf(
        Array.from({ length: count }, (_, request) =>
          Buffer.from(compare.requestBody('json', { request, payloadsPerRequest: 1, baseTimeMs })),
        ),
      ),
    },
    {
      name: 'spec-shaped (containers, processes)',
      messages: messagesOf(take(() => specSource.next(0))),
    },
  ];
}

/** The best of `rounds` timings of `run` over every message, in µs per message. */
function bestMicrosPerMessage(rounds: number, count: number, run: () => void): number {
  let best = Infinity;
  for (let round = 0; round < rounds; round++) {
    const startedAt = process.hrtime.bigint();
    run();
    best = Math.min(best, Number(process.hrtime.bigint() - startedAt) / 1000 / count);
  }
  return best;
}

type Report = {
  settings: { messages: number; rounds: number };
  workloads: {
    name: string;
    /** Per message: the best round's encode and decode µs, and the mean encoded bytes. */
    candidates: { name: string; encodeMicros: number; decodeMicros: number; bytes: number }[];
  }[];
};

const usage = `Usage: npm run bench:encoding -- [options]
  --messages N   messages per workload (default 20000)
  --rounds N     timed rounds of each encode and decode; the best counts (default 5)
  --out FILE     JSON results (default bench-results/encoding-<iso date>.json)`;

function measure(
  _: void,
  { options, report }: BenchContext<Report['settings'], Report>,
  workloads: Workload[],
): Promise<void> {
  const { messages: count, rounds } = options;
  for (const workload of workloads) {
    const figures: Report['workloads'][number] = { name: workload.name, candidates: [] };
    report.workloads.push(figures);
    for (const candidate of candidates) {
      let encoded: Uint8Array[] = [];
      const encodeMicros = bestMicrosPerMessage(rounds, count, () => {
        encoded = workload.messages.map((message) => candidate.encode(message));
      });
      const buffers = encoded.map((bytes) =>
        Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length),
      );
      let sink = 0;
      const decodeMicros = bestMicrosPerMessage(rounds, count, () => {
        for (const buffer of buffers) sink += candidate.decode(buffer);
      });
      const bytes = buffers.reduce((sum, buffer) => sum + buffer.length, 0) / buffers.length;
      if (!Number.isFinite(sink)) throw new Error('decode produced a non-finite weight');
      figures.candidates.push({ name: candidate.name, encodeMicros, decodeMicros, bytes });
    }
  }
  return Promise.resolve();
}

function formatReport(report: ReportBase & Report): string {
  const lines = [
    `bench:encoding — ${report.date}, node ${report.machine.node}`,
    `${report.settings.messages} messages per workload, best of ${report.settings.rounds} rounds`,
    '',
  ];
  for (const workload of report.workloads) {
    lines.push(workload.name, '  encoding              encode µs   decode µs   bytes/msg');
    for (const each of workload.candidates) {
      lines.push(
        `  ${each.name.padEnd(20)} ${each.encodeMicros.toFixed(2).padStart(9)} ${each.decodeMicros
          .toFixed(2)
          .padStart(11)} ${each.bytes.toFixed(0).padStart(11)}`,
      );
    }
    lines.push('');
  }
  lines.push(...formatNotes(report));
  return lines.join('\n');
}

await runBench({
  name: 'encoding',
  usage,
  defaults: { messages: '20000', rounds: '5' },
  parseOptions: (values) => ({
    messages: integerOption('messages', values.messages),
    rounds: integerOption('rounds', values.rounds),
  }),
  createReport: (settings): Report => ({ settings, workloads: [] }),
  seed: (_, { options }) => Promise.resolve(workloads(options.messages)),
  measure,
  format: formatReport,
});
