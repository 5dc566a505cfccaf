type WriterCounters = {
  /** `writer_samples_written_total`: rows the writer stored. */
  samplesWritten: number;
  /** `writer_batch_write_seconds_sum`: time spent in its storage transactions. */
  writeSeconds: number;
  /** `writer_batch_write_seconds_count`: storage transactions. */
  batches: number;
};

/** Reads the writer's counters from its Prometheus endpoint; undefined if it does not answer. */
export async function scrapeWriterCounters(baseUrl: string): Promise<WriterCounters | undefined> {
  try {
    const response = await fetch(`${baseUrl}/metrics`, { signal: AbortSignal.timeout(5_000) });
    if (!response.ok) return undefined;
    const text = await response.text();
    return {
      samplesWritten: sumOf(text, 'writer_samples_written_total'),
      writeSeconds: sumOf(text, 'writer_batch_write_seconds_sum'),
      batches: sumOf(text, 'writer_batch_write_seconds_count'),
    };
  } catch {
    return undefined;
  }
}

/** The sum of a metric over all its label sets in the Prometheus text format. */
export function sumOf(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== ' ' && rest[0] !== '{') continue;
    const value = Number(rest.slice(rest.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) sum += value;
  }
  return sum;
}
