import protobuf from 'protobufjs';
import snappy from 'snappy';
import type { StorageFleet } from './storage-fleet.js';

/** Points per series in one remote-write request: 30 min at 15 s, within the head's 1 h window. */
const pointsPerRequest = 120;
/** Hosts per request: 100 hosts × 10 metrics × 120 points = 120,000 samples. */
const hostsPerRequest = 100;

/** One host's labels as our Prometheus API reads them back: tags, `host`, `__name__`. */
function fleetLabels(fleet: StorageFleet, host: number, metric: string): [string, string][] {
  const info = fleet.hosts[host]!;
  return Object.entries({ ...info.tags, host: info.name, __name__: metric }).sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
}

/** A prompb.WriteRequest of hosts [firstHost, endHost) at points [firstPoint, endPoint). */
function writeRequest(
  fleet: StorageFleet,
  firstHost: number,
  endHost: number,
  firstPoint: number,
  endPoint: number,
): Buffer {
  const writer = protobuf.Writer.create();
  const { metrics, pointsPerSeries, values } = fleet;
  for (let host = firstHost; host < endHost; host++) {
    for (let m = 0; m < metrics.length; m++) {
      const series = host * metrics.length + m;
      writer.uint32((1 << 3) | 2).fork(); // WriteRequest.timeseries
      for (const [name, value] of fleetLabels(fleet, host, metrics[m]!.name)) {
        writer.uint32(10).fork().uint32(10).string(name).uint32(18).string(value).ldelim();
      }
      for (let p = firstPoint; p < endPoint; p++) {
        writer
          .uint32(18)
          .fork()
          .uint32(9)
          .double(values[series * pointsPerSeries + p]!)
          .uint32(16)
          .int64(fleet.timeOf(p, host))
          .ldelim();
      }
      writer.ldelim();
    }
  }
  return snappy.compressSync(Buffer.from(writer.finish()));
}

/**
 * Sends the whole fleet to a Prometheus started with `--web.enable-remote-write-receiver`, in
 * time order (30-minute windows, every host in each before the next), since its head refuses
 * samples more than an hour older than the newest it holds. Two requests in flight.
 */
export async function remoteWriteFleet(
  baseUrl: string,
  fleet: StorageFleet,
  progress: (samplesSent: number) => void,
): Promise<void> {
  let sent = 0;
  const hostCount = fleet.hosts.length;
  for (let first = 0; first < fleet.pointsPerSeries; first += pointsPerRequest) {
    const end = Math.min(first + pointsPerRequest, fleet.pointsPerSeries);
    const groups: number[] = [];
    for (let h = 0; h < hostCount; h += hostsPerRequest) groups.push(h);
    const send = async (h: number): Promise<void> => {
      const hEnd = Math.min(h + hostsPerRequest, hostCount);
      const response = await fetch(`${baseUrl}/api/v1/write`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-protobuf',
          'Content-Encoding': 'snappy',
          'X-Prometheus-Remote-Write-Version': '0.1.0',
        },
        body: writeRequest(fleet, h, hEnd, first, end),
      });
      if (response.status !== 204) {
        throw new Error(`Prometheus answered ${response.status}: ${await response.text()}`);
      }
      sent += (hEnd - h) * fleet.metrics.length * (end - first);
      progress(sent);
    };
    for (let i = 0; i < groups.length; i += 2) {
      await Promise.all(groups.slice(i, i + 2).map(send));
    }
  }
}
