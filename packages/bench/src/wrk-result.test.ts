import { describe, expect, it } from 'vitest';
import { parseWrkOutput } from './wrk-result.js';

const output = `Running 5s test @ http://127.0.0.1:18428
  2 threads and 64 connections
  62860 requests in 5.04s, 6.83MB read
Requests/sec:  12467.99
Transfer/sec:      1.36MB
wrk-result {"durationUs":5000000,"completed":62860,"sent":62922,"statuses":{"204":62800,"400":60},"errors":{"connect":0,"read":1,"write":0,"status":60,"timeout":2},"latencyUs":{"mean":19254.7,"p50":4422,"p90":40271,"p99":308548,"max":404146}}
`;

describe('parseWrkOutput', () => {
  it('counts 2xx answers as acknowledged and the rest as failed', () => {
    const figures = parseWrkOutput(output, 3);
    expect(figures.acknowledged).toBe(62_800);
    expect(figures.samplesAcknowledged).toBe(188_400);
    expect(figures.failedStatuses).toEqual({ '400': 60 });
    expect(figures.socketErrors).toBe(3);
    expect(figures.failed).toBe(63);
  });

  it('takes rates over wrk’s own duration', () => {
    const figures = parseWrkOutput(output, 3);
    expect(figures.durationSeconds).toBe(5);
    expect(figures.requestsPerSecond).toBe(12_560);
    expect(figures.samplesPerSecond).toBe(37_680);
  });

  it('bounds what may be stored by every request sent, in flight at the stop included', () => {
    const figures = parseWrkOutput(output, 3);
    expect(figures.samplesSent).toBe(188_766);
    expect(figures.unanswered).toBe(62);
  });

  it('reads the latency percentiles in milliseconds', () => {
    expect(parseWrkOutput(output, 3).latency).toEqual({
      meanMs: 19.255,
      p50Ms: 4.422,
      p90Ms: 40.271,
      p99Ms: 308.548,
      maxMs: 404.146,
    });
  });

  it('fails with wrk’s output when the script printed no results', () => {
    expect(() => parseWrkOutput('PANIC: unprotected error in call to Lua API', 3)).toThrow(
      /no wrk-result line:\nPANIC/,
    );
  });
});
