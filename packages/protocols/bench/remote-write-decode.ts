/**
 * Decode cost of a Prometheus remote-write 1.0 batch of 2,000 samples (Prometheus' default
 * max_samples_per_send), per sample: snappy alone, snappy + protobuf, and the whole
 * decodeRemoteWriteV1 (snappy, protobuf, mapping to host samples). CPU time from
 * process.cpuUsage (one thread; GC helpers count too), wall time from hrtime.
 *
 * It measures the built package (what the gateway runs): build first, and run without the
 * `development` condition so that `@monitor/protocols` resolves to dist/ (tsx's own transform
 * of the sources adds a per-closure cost that production code does not have).
 *
 *   npx turbo run build --filter=@monitor/protocols
 *   npx tsx packages/protocols/bench/remote-write-decode.ts
 *
 * Options (env): ROUNDS (2000), SERIES (2000). CPU figures include V8's GC helper threads; on
 * a loaded machine take the lowest of a few runs.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeRemoteWriteV1 } from '@monitor/protocols';
import protobuf from 'protobufjs';
import { compressSync, uncompressSync } from 'snappy';

const rounds = Number(process.env['ROUNDS'] ?? 2000);
const seriesCount = Number(process.env['SERIES'] ?? 2000);
const nowMs = Date.now();

type Series = {
  labels: { name: string; value: string }[];
  samples: { value: number; timestamp: number }[];
};

const label = (name: string, value: string) => ({ name, value });

/**
 * `layout` `distinct`: 10 hosts × 200 metric names, every sample storable. `node`: node_exporter
 * series as Prometheus scrapes them (cpu × mode, filesystems, network devices…) from 4 hosts:
 * many share a name and differ by labels, so most of those are counted as collisions.
 */
function batch(layout: 'distinct' | 'node'): Series[] {
  const series: Series[] = [];
  const timestamp = nowMs - 15_000;
  for (let i = 0; series.length < seriesCount; i++) {
    if (layout === 'distinct') {
      const host = `host-${String(i % 10).padStart(2, '0')}.example.internal`;
      series.push({
        labels: [
          label('__name__', `app_metric_${Math.floor(i / 10)}_total`),
          label('env', 'prod'),
          label('instance', `${host}:9100`),
          label('job', 'app'),
          label('region', 'eu-west-1'),
        ],
        samples: [{ value: Math.random() * 1e6, timestamp }],
      });
    } else {
      const host = `node-${i % 4}.example.internal:9100`;
      const n = Math.floor(i / 4);
      const kind = n % 4;
      const extra =
        kind === 0
          ? [
              label('cpu', String(n % 16)),
              label('mode', ['idle', 'user', 'system', 'iowait'][n % 4]!),
            ]
          : kind === 1
            ? [
                label('device', `sd${'abcd'[n % 4]}`),
                label('fstype', 'ext4'),
                label('mountpoint', `/data${n % 8}`),
              ]
            : kind === 2
              ? [label('device', `eth${n % 2}`)]
              : [];
      const name =
        kind === 0
          ? 'node_cpu_seconds_total'
          : kind === 1
            ? 'node_filesystem_avail_bytes'
            : kind === 2
              ? 'node_network_receive_bytes_total'
              : `node_memory_metric_${n}_bytes`;
      series.push({
        labels: [
          label('__name__', name),
          ...extra,
          label('instance', host),
          label('job', 'node'),
        ].sort((a, b) => (a.name < b.name ? -1 : 1)),
        samples: [{ value: Math.random() * 1e9, timestamp }],
      });
    }
  }
  return series;
}

function measure(name: string, run: () => unknown): void {
  for (let i = 0; i < Math.min(200, rounds); i++) run();
  const cpu = process.cpuUsage();
  const wall = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) run();
  const wallUs = Number(process.hrtime.bigint() - wall) / 1000 / rounds;
  const used = process.cpuUsage(cpu);
  const cpuUs = (used.user + used.system) / rounds;
  const per = (us: number) => ((us / seriesCount) * 1000).toFixed(0).padStart(5);
  process.stdout.write(
    `${name.padEnd(44)} ${wallUs.toFixed(0).padStart(6)} µs/batch  ${per(wallUs)} ns/sample wall  ${per(cpuUs)} ns/sample CPU\n`,
  );
}

const protoDirectory = fileURLToPath(new URL('../proto/prometheus/', import.meta.url));
const root = new protobuf.Root();
root.resolvePath = (_origin, target) => path.join(protoDirectory, target);
const type = root.loadSync('remote.proto').lookupType('prometheus.WriteRequest');
const options = { nowMs, maxDecodedBytes: 64 << 20 };
for (const layout of ['distinct', 'node'] as const) {
  const raw = type.encode(type.fromObject({ timeseries: batch(layout) })).finish();
  const body = compressSync(Buffer.from(raw));
  const decoded = decodeRemoteWriteV1(body, options);
  process.stdout.write(
    `\n${layout}: ${seriesCount} samples, ${raw.length} bytes protobuf, ${body.length} bytes snappy; ` +
      `${decoded.accepted} accepted in ${decoded.samples.length} host samples, rejected ${JSON.stringify(decoded.rejected)}\n`,
  );
  measure('snappy', () => uncompressSync(body, { asBuffer: true, copyOutputData: true }));
  measure('snappy + protobuf (WriteRequest)', () => {
    const bytes = uncompressSync(body, { asBuffer: true, copyOutputData: true }) as Buffer;
    return type.decode(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  });
  measure('decodeRemoteWriteV1 (snappy, protobuf, mapping)', () =>
    decodeRemoteWriteV1(body, options),
  );
}
