import { describe, expect, it } from 'vitest';
import type { WrkScriptOptions } from './wrk-script.js';
import { createWrkScript, luaString, wrkResultMarker } from './wrk-script.js';

const options: WrkScriptOptions = {
  dataFile: '/tmp/bench logs/fleet-json.txt',
  format: 'json',
  hostCount: 10_000,
  valueVariants: 4,
  payloadsPerRequest: 100,
  baseTimeMs: 1_795_448_783_000,
  threads: 2,
  path: '/api/v1/ingest',
  headers: { 'Content-Type': 'application/json', 'X-API-Key': 'mon_bench_0123' },
};

describe('luaString', () => {
  it('quotes text so that Lua reads back exactly the same bytes', () => {
    expect(luaString('plain')).toBe('"plain"');
    expect(luaString('say "hi" \\ bye')).toBe('"say \\"hi\\" \\\\ bye"');
    expect(luaString('\n')).toBe('"\\010"');
  });

  it('escapes control characters with three digits, so a digit after one cannot extend it', () => {
    expect(luaString('\t1')).toBe('"\\0091"');
  });
});

describe('createWrkScript', () => {
  it('sets the workload from its options', () => {
    const script = createWrkScript(options);
    expect(script).toContain('local data_file = "/tmp/bench logs/fleet-json.txt"');
    expect(script).toContain('local host_count = 10000');
    expect(script).toContain('local value_variants = 4');
    expect(script).toContain('local payloads_per_request = 100');
    expect(script).toContain('local base_time_ms = 1795448783000');
    expect(script).toContain('local thread_count = 2');
    expect(script).toContain('local path = "/api/v1/ingest"');
    expect(script).toContain(
      'local headers = { ["Content-Type"] = "application/json", ["X-API-Key"] = "mon_bench_0123" }',
    );
  });

  it('joins a JSON batch as an array and a single JSON payload bare', () => {
    expect(createWrkScript(options)).toContain(
      'local body_open, body_separator, body_close = "[", ",", "]"',
    );
    expect(createWrkScript({ ...options, payloadsPerRequest: 1 })).toContain(
      'local body_open, body_separator, body_close = "", "", ""',
    );
  });

  it('stamps line protocol with epoch milliseconds and JSON with ISO 8601 time', () => {
    const influx = createWrkScript({ ...options, format: 'influx', path: '/write?precision=ms' });
    expect(influx).toContain('string.format("%.0f", time_ms)');
    expect(influx).toContain('local body_open, body_separator, body_close = "", "\\010", "\\010"');
    expect(createWrkScript(options)).toContain('os.date("!%Y-%m-%dT%H:%M:%S"');
  });

  it('numbers requests across threads so no two threads send the same payload', () => {
    const script = createWrkScript(options);
    expect(script).toContain('next_request = thread_index');
    expect(script).toContain('next_request = n + thread_count');
  });

  it('counts answers by status and prints the results after the marker', () => {
    const script = createWrkScript(options);
    expect(script).toContain('statuses[status] = (statuses[status] or 0) + 1');
    expect(script).toContain(`io.write(${luaString(wrkResultMarker)}`);
  });

  it('refuses a number Lua could not hold exactly', () => {
    expect(() => createWrkScript({ ...options, baseTimeMs: 2 ** 60 })).toThrow(RangeError);
  });
});
