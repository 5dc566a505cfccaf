import type { IngestPayload } from '@monitor/schemas';
import type { HostSpec, HostState, SamplingPlan } from './host-model.js';
import { bytes, hostPayloads, mergePayloads } from './host-model.js';
import type { Scenario, ScenarioOptions } from './scenario.js';
import type { SeededRandom } from '@monitor/testkit';
import { createSeededRandom } from '@monitor/testkit';

const minuteMs = 60_000;
const { gib, mib } = bytes;
const prodEu = { region: 'eu-west-1', environment: 'prod' };

/** Three hours of one-minute samples ending at `endMs`: enough baseline before any incident. */
function plan(endMs: number, hours = 3): SamplingPlan {
  const end = Math.floor(endMs / minuteMs) * minuteMs;
  return { startMs: end - hours * 60 * minuteMs, endMs: end, stepMs: minuteMs };
}

function payloadsOf(
  specs: HostSpec[],
  sampling: SamplingPlan,
  random: SeededRandom,
): IngestPayload[] {
  return mergePayloads(...specs.map((spec) => hostPayloads(spec, sampling, random)));
}

function setProcess(state: HostState, name: string, pid: number, cpu: number, rss: number): void {
  const existing = state.processes.find((p) => p.name === name);
  if (existing === undefined)
    state.processes.push({ name, pid, cpu_percent: cpu, memory_rss: rss });
  else Object.assign(existing, { pid, cpu_percent: cpu, memory_rss: rss });
}

function cpuHogProcess(options: ScenarioOptions, random: SeededRandom): Scenario {
  const host = 'web-1';
  return {
    name: 'cpu-hog-process',
    title: 'CPU hog process',
    host,
    rule: {
      name: 'cpu high',
      metric: 'cpu_percent',
      condition: 'greater_than',
      threshold: 80,
      duration_minutes: 5,
      severity: 'critical',
    },
    payloads: payloadsOf(
      [
        {
          host,
          tags: { service: 'web', ...prodEu },
          shape(state, ago, r) {
            const spinning = ago <= 15;
            setProcess(
              state,
              'report-worker',
              3120,
              spinning ? r.gaussian(74, 2) : r.gaussian(1, 0.3),
              310 * mib,
            );
          },
        },
      ],
      plan(options.endMs),
      random,
    ),
    expected: { kind: 'process', subject: 'report-worker' },
  };
}

function memoryLeak(options: ScenarioOptions, random: SeededRandom): Scenario {
  const host = 'app-1';
  return {
    name: 'memory-leak',
    title: 'Memory leak growth',
    host,
    rule: {
      name: 'memory high',
      metric: 'memory_percent',
      condition: 'greater_than',
      threshold: 85,
      duration_minutes: 2,
      severity: 'warning',
    },
    payloads: payloadsOf(
      [
        {
          host,
          tags: { service: 'app', ...prodEu },
          shape(state, ago, r) {
            const leakingMinutes = Math.max(0, 170 - ago);
            setProcess(
              state,
              'java',
              2201,
              r.gaussian(12, 1.5),
              1.2 * gib + leakingMinutes * 68 * mib,
            );
          },
        },
      ],
      plan(options.endMs),
      random,
    ),
    expected: { kind: 'process', subject: 'java' },
  };
}

function diskFilling(options: ScenarioOptions, random: SeededRandom): Scenario {
  const host = 'logs-1';
  return {
    name: 'disk-filling',
    title: 'Disk filling',
    host,
    rule: {
      name: 'disk almost full',
      metric: 'disk_used_percent',
      condition: 'greater_than',
      threshold: 90,
      duration_minutes: 0,
      severity: 'warning',
    },
    payloads: payloadsOf(
      [
        {
          host,
          tags: { service: 'logs', ...prodEu },
          shape(state, ago, r) {
            state.metricSet.disk_used_percent = 70 + (180 - ago) * 0.12 + r.gaussian(0, 0.05);
          },
        },
      ],
      plan(options.endMs),
      random,
    ),
    expected: { kind: 'resource_trend', subject: 'disk_used_percent' },
  };
}

function noisyNeighbour(options: ScenarioOptions, random: SeededRandom): Scenario {
  const host = 'web-3';
  return {
    name: 'noisy-neighbour',
    title: 'Noisy neighbour container',
    host,
    rule: {
      name: 'cpu high',
      metric: 'cpu_percent',
      condition: 'greater_than',
      threshold: 80,
      duration_minutes: 5,
      severity: 'critical',
    },
    payloads: payloadsOf(
      [
        {
          host,
          tags: { service: 'web', ...prodEu },
          shape(state, ago, r) {
            const cpu = ago <= 16 ? r.gaussian(76, 2) : r.gaussian(1.5, 0.4);
            setProcess(state, 'python3', 5100, cpu, 420 * mib);
            state.containers.push({
              name: 'batch-report',
              image: 'acme/report:2.3',
              status: 'running',
              cpu_percent: cpu,
              memory_usage: 450 * mib,
            });
          },
        },
      ],
      plan(options.endMs),
      random,
    ),
    expected: { kind: 'container', subject: 'batch-report' },
    traits: ['noisy_neighbour'],
  };
}

function badDeploy(options: ScenarioOptions, random: SeededRandom): Scenario {
  const host = 'api-9';
  return {
    name: 'deploy-raises-cpu',
    title: 'Deploy changes an image and raises CPU',
    host,
    rule: {
      name: 'cpu high',
      metric: 'cpu_percent',
      condition: 'greater_than',
      threshold: 75,
      duration_minutes: 5,
      severity: 'critical',
    },
    payloads: payloadsOf(
      [
        {
          host,
          tags: { service: 'api', ...prodEu },
          shape(state, ago, r) {
            const deployed = ago <= 18;
            const hot = ago <= 16;
            const cpu = hot ? r.gaussian(70, 3) : r.gaussian(8, 1);
            setProcess(state, 'node', deployed ? 7001 : 3300, cpu, 380 * mib);
            state.containers.push({
              name: 'api',
              image: deployed ? 'shop/api:1.9.0' : 'shop/api:1.8.0',
              status: deployed
                ? `Up ${18 - ago + 1} minutes`
                : `Up ${3 + Math.floor((180 - ago) / 60)} hours`,
              cpu_percent: cpu,
              memory_usage: 400 * mib,
            });
          },
        },
      ],
      plan(options.endMs),
      random,
    ),
    expected: { kind: 'deploy', subject: 'api' },
  };
}

function fleetWideSpike(options: ScenarioOptions, random: SeededRandom): Scenario {
  const checkout = (host: string): HostSpec => ({
    host,
    tags: { service: 'checkout', ...prodEu },
    shape(state, ago, r) {
      // A traffic surge: every checkout host serves more, so its api process works harder.
      const surge = ago <= 15;
      setProcess(
        state,
        'checkout-api',
        4100,
        surge ? r.gaussian(78, 2) : r.gaussian(10, 1.5),
        520 * mib,
      );
      if (surge) state.metricAdd.net_rx_kbps = 5200;
    },
  });
  const search = (host: string): HostSpec => ({ host, tags: { service: 'search', ...prodEu } });
  return {
    name: 'fleet-wide-spike',
    title: 'Fleet-wide spike across all hosts of a service',
    host: 'checkout-1',
    rule: {
      name: 'cpu high',
      metric: 'cpu_percent',
      condition: 'greater_than',
      threshold: 80,
      duration_minutes: 5,
      severity: 'critical',
    },
    payloads: payloadsOf(
      [
        checkout('checkout-1'),
        checkout('checkout-2'),
        checkout('checkout-3'),
        checkout('checkout-4'),
        search('search-1'),
        search('search-2'),
      ],
      plan(options.endMs),
      random,
    ),
    expected: { kind: 'fleet_wide', subject: 'service=checkout' },
    traits: ['peers'],
  };
}

function flappingRule(options: ScenarioOptions, random: SeededRandom): Scenario {
  const host = 'cache-1';
  return {
    name: 'flapping-rule',
    title: 'Flapping rule',
    host,
    rule: {
      name: 'cache cpu busy',
      metric: 'cpu_percent',
      condition: 'greater_than',
      threshold: 74,
      duration_minutes: 0,
      severity: 'warning',
    },
    payloads: payloadsOf(
      [
        {
          host,
          tags: { service: 'cache', ...prodEu },
          shape(state, _ago, r) {
            // A steady but noisy load whose ordinary peaks cross the rule's threshold.
            setProcess(state, 'memcached', 2600, r.gaussian(56, 4), 2 * gib);
          },
        },
      ],
      plan(options.endMs, 26),
      random,
    ),
    expected: { kind: 'flapping_rule', subject: 'cache cpu busy' },
  };
}

function restartingContainer(options: ScenarioOptions, random: SeededRandom): Scenario {
  const host = 'pay-1';
  return {
    name: 'restarting-container',
    title: 'Restarting container',
    host,
    rule: {
      name: 'errors high',
      metric: 'error_rate',
      condition: 'greater_than',
      threshold: 5,
      duration_minutes: 3,
      severity: 'critical',
    },
    payloads: payloadsOf(
      [
        {
          host,
          tags: { service: 'payments', ...prodEu },
          shape(state, ago, r) {
            const looping = ago <= 14;
            const down = looping && ago % 2 === 0;
            state.containers.push({
              name: 'payments',
              image: 'acme/payments:3.1.4',
              status: down
                ? 'Restarting (137) 4 seconds ago'
                : looping
                  ? 'Up 40 seconds'
                  : 'Up 5 hours',
              cpu_percent: down ? 0 : r.gaussian(6, 1),
              memory_usage: down ? 0 : 300 * mib,
            });
            if (!down)
              setProcess(
                state,
                'payments-svc',
                looping ? 8000 + ago : 3900,
                r.gaussian(6, 1),
                280 * mib,
              );
            if (looping) state.metricSet.error_rate = r.gaussian(14, 2);
          },
        },
      ],
      plan(options.endMs),
      random,
    ),
    expected: { kind: 'container_restart', subject: 'payments' },
  };
}

function unexplainedSpike(options: ScenarioOptions, random: SeededRandom): Scenario {
  const host = 'web-2';
  return {
    name: 'unexplained-spike',
    title: 'Spike with no visible cause',
    host,
    rule: {
      name: 'cpu high',
      metric: 'cpu_percent',
      condition: 'greater_than',
      threshold: 75,
      duration_minutes: 2,
      severity: 'critical',
    },
    payloads: payloadsOf(
      [
        {
          host,
          tags: { service: 'web', ...prodEu },
          shape(state, ago, r) {
            // CPU no listed process accounts for (kernel, interrupts, a hypervisor's steal).
            if (ago <= 12) state.metricAdd.cpu_percent = r.gaussian(70, 3);
          },
        },
      ],
      plan(options.endMs),
      random,
    ),
    expected: { kind: 'inconclusive' },
  };
}

function backupJobMemory(options: ScenarioOptions, random: SeededRandom): Scenario {
  const host = 'db-1';
  return {
    name: 'backup-job-memory',
    title: 'A backup job appears and takes memory',
    host,
    rule: {
      name: 'memory high',
      metric: 'memory_percent',
      condition: 'greater_than',
      threshold: 80,
      duration_minutes: 2,
      severity: 'warning',
    },
    payloads: payloadsOf(
      [
        {
          host,
          tags: { service: 'db', ...prodEu },
          shape(state, ago, r) {
            setProcess(
              state,
              'postgres',
              1800,
              r.gaussian(15, 2),
              6 * gib + r.gaussian(0, 20) * mib,
            );
            if (ago <= 14) {
              const minutesIn = 14 - ago;
              setProcess(
                state,
                'pg_dump',
                9100,
                r.gaussian(30, 3),
                Math.min(6 * gib, (minutesIn + 1) * 2 * gib),
              );
            }
          },
        },
      ],
      plan(options.endMs),
      random,
    ),
    expected: { kind: 'process', subject: 'pg_dump' },
  };
}

function localHogBusyPeer(options: ScenarioOptions, random: SeededRandom): Scenario {
  const api = (host: string, shape?: HostSpec['shape']): HostSpec => ({
    host,
    tags: { service: 'search-api', ...prodEu },
    ...(shape === undefined ? {} : { shape }),
  });
  return {
    name: 'local-hog-busy-peer',
    title: 'Local hog while one peer is also busy',
    host: 'sapi-1',
    rule: {
      name: 'cpu high',
      metric: 'cpu_percent',
      condition: 'greater_than',
      threshold: 80,
      duration_minutes: 5,
      severity: 'critical',
    },
    payloads: payloadsOf(
      [
        api('sapi-1', (state, ago, r) => {
          if (ago <= 15) setProcess(state, 'gzip', 6600, r.gaussian(74, 2), 12 * mib);
        }),
        api('sapi-2'),
        // An unrelated, smaller job on one peer at the same time: not enough to call it fleet-wide.
        api('sapi-3', (state, ago, r) => {
          if (ago <= 17) setProcess(state, 'logrotate', 6100, r.gaussian(30, 2), 20 * mib);
        }),
        api('sapi-4'),
      ],
      plan(options.endMs),
      random,
    ),
    expected: { kind: 'process', subject: 'gzip' },
    traits: ['peers'],
  };
}

function cpuRule(threshold: number, durationMinutes: number): Scenario['rule'] {
  return {
    name: 'cpu high',
    metric: 'cpu_percent',
    condition: 'greater_than',
    threshold,
    duration_minutes: durationMinutes,
    severity: 'critical',
  };
}

/** One host, alone in its service. */
function oneHost(
  options: ScenarioOptions,
  random: SeededRandom,
  spec: Omit<HostSpec, 'tags'> & { service: string },
): IngestPayload[] {
  const { service, ...rest } = spec;
  return payloadsOf([{ ...rest, tags: { service, ...prodEu } }], plan(options.endMs), random);
}

function firstSeenCpuHog(options: ScenarioOptions, random: SeededRandom): Scenario {
  const host = 'web-new-1';
  return {
    name: 'first-seen-cpu-hog',
    title: 'First-seen host with a CPU hog from its first sample',
    host,
    rule: cpuRule(80, 5),
    payloads: oneHost(options, random, {
      host,
      service: 'web',
      firstSeenMinutesAgo: 20,
      shape(state, _ago, r) {
        setProcess(state, 'report-worker', 3120, r.gaussian(80, 2), 310 * mib);
      },
    }),
    expected: { kind: 'process', subject: 'report-worker' },
    traits: ['first_seen'],
  };
}

function firstSeenMemoryLeak(options: ScenarioOptions, random: SeededRandom): Scenario {
  const host = 'app-new-1';
  return {
    name: 'first-seen-memory-leak',
    title: 'First-seen host whose java process keeps growing',
    host,
    rule: {
      name: 'memory high',
      metric: 'memory_percent',
      condition: 'greater_than',
      threshold: 35,
      duration_minutes: 2,
      severity: 'warning',
    },
    payloads: oneHost(options, random, {
      host,
      service: 'app',
      firstSeenMinutesAgo: 20,
      shape(state, ago, r) {
        setProcess(state, 'java', 2201, r.gaussian(12, 1.5), 3.5 * gib + (20 - ago) * 100 * mib);
      },
    }),
    expected: { kind: 'process', subject: 'java' },
    traits: ['first_seen'],
  };
}

function firstSeenNoisyNeighbour(options: ScenarioOptions, random: SeededRandom): Scenario {
  const host = 'web-new-3';
  return {
    name: 'first-seen-noisy-neighbour',
    title: 'First-seen host shared with a busy batch container',
    host,
    rule: cpuRule(80, 5),
    payloads: oneHost(options, random, {
      host,
      service: 'web',
      firstSeenMinutesAgo: 25,
      shape(state, _ago, r) {
        const cpu = r.gaussian(80, 2);
        setProcess(state, 'python3', 5100, cpu, 420 * mib);
        state.containers.push({
          name: 'batch-report',
          image: 'acme/report:2.3',
          status: 'running',
          cpu_percent: cpu,
          memory_usage: 450 * mib,
        });
      },
    }),
    expected: { kind: 'container', subject: 'batch-report' },
    traits: ['first_seen', 'noisy_neighbour'],
  };
}

function firstSeenRestartLoop(options: ScenarioOptions, random: SeededRandom): Scenario {
  const host = 'pay-new-1';
  return {
    name: 'first-seen-restart-loop',
    title: 'First-seen host whose payments container crash-loops',
    host,
    rule: {
      name: 'errors high',
      metric: 'error_rate',
      condition: 'greater_than',
      threshold: 5,
      duration_minutes: 8,
      severity: 'critical',
    },
    payloads: oneHost(options, random, {
      host,
      service: 'payments',
      firstSeenMinutesAgo: 20,
      shape(state, ago, r) {
        const down = ago % 2 === 0;
        state.containers.push({
          name: 'payments',
          image: 'acme/payments:3.1.4',
          status: down ? 'Restarting (137) 4 seconds ago' : 'Up 40 seconds',
          cpu_percent: down ? 0 : r.gaussian(6, 1),
          memory_usage: down ? 0 : 300 * mib,
        });
        if (!down) setProcess(state, 'payments-svc', 8000 + ago, r.gaussian(6, 1), 280 * mib);
        state.metricSet.error_rate = r.gaussian(14, 2);
      },
    }),
    expected: { kind: 'container_restart', subject: 'payments' },
    traits: ['first_seen'],
  };
}

function firstSeenDeploy(options: ScenarioOptions, random: SeededRandom): Scenario {
  const host = 'api-new-9';
  return {
    name: 'first-seen-deploy',
    title: 'Deploy on a host seen for half an hour',
    host,
    rule: cpuRule(75, 5),
    payloads: oneHost(options, random, {
      host,
      service: 'api',
      firstSeenMinutesAgo: 30,
      shape(state, ago, r) {
        const deployed = ago <= 18;
        const cpu = ago <= 16 ? r.gaussian(76, 2) : r.gaussian(8, 1);
        setProcess(state, 'node', deployed ? 7001 : 3300, cpu, 380 * mib);
        state.containers.push({
          name: 'api',
          image: deployed ? 'acme/api:1.9.0' : 'acme/api:1.8.0',
          status: deployed ? 'Up 2 minutes' : 'Up 3 days',
          cpu_percent: cpu,
          memory_usage: 400 * mib,
        });
      },
    }),
    expected: { kind: 'deploy', subject: 'api' },
    traits: ['first_seen'],
  };
}

function firstSeenRecentStart(options: ScenarioOptions, random: SeededRandom): Scenario {
  const host = 'api-old-4';
  return {
    name: 'first-seen-recent-start',
    title: 'Agent new on an old host: a container started minutes before burns the CPU',
    host,
    rule: cpuRule(75, 5),
    payloads: oneHost(options, random, {
      host,
      service: 'api',
      firstSeenMinutesAgo: 12,
      shape(state, ago, r) {
        // The agent was installed 12 minutes ago; api was started 18 minutes ago, the rest days ago.
        for (const c of state.containers) c.status = 'Up 3 days';
        const cpu = r.gaussian(78, 2);
        setProcess(state, 'node', 7001, cpu, 380 * mib);
        state.containers.push({
          name: 'api',
          image: 'acme/api:1.9.0',
          status: `Up ${18 - ago} minutes`,
          cpu_percent: cpu,
          memory_usage: 400 * mib,
        });
      },
    }),
    expected: { kind: 'container_restart', subject: 'api' },
    traits: ['first_seen'],
  };
}

function processListingBegins(options: ScenarioOptions, random: SeededRandom): Scenario {
  const host = 'web-6';
  return {
    name: 'process-listing-begins',
    title: 'Metrics for hours, processes listed only since 20 minutes: a CPU hog',
    host,
    rule: cpuRule(80, 5),
    payloads: oneHost(options, random, {
      host,
      service: 'web',
      snapshotsSinceMinutesAgo: 20,
      shape(state, ago, r) {
        if (ago <= 15) setProcess(state, 'report-worker', 3120, r.gaussian(80, 2), 310 * mib);
      },
    }),
    expected: { kind: 'process', subject: 'report-worker' },
  };
}

function firstSeenUnexplained(options: ScenarioOptions, random: SeededRandom): Scenario {
  const host = 'web-new-2';
  return {
    name: 'first-seen-unexplained',
    title: 'First-seen host busy with CPU no process accounts for',
    host,
    rule: cpuRule(75, 2),
    payloads: oneHost(options, random, {
      host,
      service: 'web',
      firstSeenMinutesAgo: 20,
      shape(state, _ago, r) {
        state.metricAdd.cpu_percent = r.gaussian(75, 2);
      },
    }),
    expected: { kind: 'inconclusive' },
    traits: ['first_seen'],
  };
}

function noSnapshotFirstSeen(options: ScenarioOptions, random: SeededRandom): Scenario {
  const host = 'edge-new-1';
  return {
    name: 'no-snapshot-first-seen',
    title: 'First-seen host that reports no processes or containers (abstain)',
    host,
    rule: cpuRule(80, 5),
    payloads: oneHost(options, random, {
      host,
      service: 'edge',
      firstSeenMinutesAgo: 20,
      reportsSnapshots: false,
      shape(state, _ago, r) {
        // Burns CPU, but the agent lists no processes: nothing stored says who.
        setProcess(state, 'report-worker', 3120, r.gaussian(80, 2), 310 * mib);
      },
    }),
    expected: { kind: 'inconclusive' },
    traits: ['first_seen', 'no_snapshot'],
  };
}

function firstSeenBusyFleet(options: ScenarioOptions, random: SeededRandom): Scenario {
  const checkout = (host: string, firstSeenMinutesAgo?: number): HostSpec => ({
    host,
    tags: { service: 'checkout', ...prodEu },
    ...(firstSeenMinutesAgo === undefined ? {} : { firstSeenMinutesAgo }),
    shape(state, ago, r) {
      const surge = ago <= 30;
      setProcess(
        state,
        'checkout-api',
        4100,
        surge ? r.gaussian(80, 2) : r.gaussian(10, 1.5),
        520 * mib,
      );
    },
  });
  return {
    name: 'first-seen-busy-fleet',
    title: 'A host scaled out into a service whose hosts all spike',
    host: 'checkout-5',
    rule: cpuRule(80, 5),
    payloads: payloadsOf(
      [
        checkout('checkout-1'),
        checkout('checkout-2'),
        checkout('checkout-3'),
        checkout('checkout-5', 18),
      ],
      plan(options.endMs),
      random,
    ),
    expected: { kind: 'fleet_wide', subject: 'service=checkout' },
    traits: ['first_seen', 'peers'],
  };
}

function memoryNoisyNeighbour(options: ScenarioOptions, random: SeededRandom): Scenario {
  const host = 'app-7';
  return {
    name: 'memory-noisy-neighbour',
    title: 'A search container next door takes the memory',
    host,
    rule: {
      name: 'memory high',
      metric: 'memory_percent',
      condition: 'greater_than',
      threshold: 45,
      duration_minutes: 3,
      severity: 'warning',
    },
    payloads: oneHost(options, random, {
      host,
      service: 'app',
      shape(state, ago, r) {
        const rss = 2 * gib + Math.min(5, Math.max(0, 15 - ago)) * gib + r.gaussian(0, 20) * mib;
        setProcess(state, 'java', 4100, r.gaussian(20, 2), rss);
        state.containers.push({
          name: 'elasticsearch',
          image: 'elasticsearch:8.14.1',
          status: 'running',
          cpu_percent: r.gaussian(20, 2),
          memory_usage: rss + 40 * mib,
        });
      },
    }),
    expected: { kind: 'container', subject: 'elasticsearch' },
    traits: ['noisy_neighbour'],
  };
}

function loadNoisyNeighbour(options: ScenarioOptions, random: SeededRandom): Scenario {
  const host = 'web-5';
  return {
    name: 'load-noisy-neighbour',
    title: 'A transcoding container raises the load of a web host',
    host,
    rule: {
      name: 'load high',
      metric: 'load_1m',
      condition: 'greater_than',
      threshold: 3,
      duration_minutes: 5,
      severity: 'warning',
    },
    payloads: oneHost(options, random, {
      host,
      service: 'web',
      shape(state, ago, r) {
        const cpu = ago <= 14 ? r.gaussian(82, 2) : r.gaussian(2, 0.5);
        setProcess(state, 'ffmpeg', 7300, cpu, 600 * mib);
        state.containers.push({
          name: 'video-transcode',
          image: 'acme/transcode:5.0',
          status: 'running',
          cpu_percent: cpu,
          memory_usage: 650 * mib,
        });
      },
    }),
    expected: { kind: 'container', subject: 'video-transcode' },
    traits: ['noisy_neighbour'],
  };
}

function deployAndCronHog(options: ScenarioOptions, random: SeededRandom): Scenario {
  const host = 'api-12';
  return {
    name: 'deploy-and-cron-hog',
    title: 'A deploy and a cron job raise the CPU together',
    host,
    rule: cpuRule(80, 5),
    payloads: oneHost(options, random, {
      host,
      service: 'api',
      shape(state, ago, r) {
        const deployed = ago <= 18;
        const cpu = ago <= 16 ? r.gaussian(42, 2) : r.gaussian(8, 1);
        setProcess(state, 'node', deployed ? 7001 : 3300, cpu, 380 * mib);
        state.containers.push({
          name: 'api',
          image: deployed ? 'acme/api:2.1.0' : 'acme/api:2.0.3',
          status: deployed ? 'Up 2 minutes' : 'Up 3 days',
          cpu_percent: cpu,
          memory_usage: 400 * mib,
        });
        if (ago <= 15) setProcess(state, 'backup.sh', 9400, r.gaussian(38, 2), 40 * mib);
      },
    }),
    expected: {
      kind: 'deploy',
      subject: 'api',
      topK: 2,
      also: [{ kind: 'process', subject: 'backup.sh' }],
    },
    traits: ['several_causes'],
  };
}

function twoProcessesShareCpu(options: ScenarioOptions, random: SeededRandom): Scenario {
  const host = 'media-1';
  return {
    name: 'two-processes-share-cpu',
    title: 'Two jobs start together and share the CPU',
    host,
    rule: cpuRule(80, 5),
    payloads: oneHost(options, random, {
      host,
      service: 'media',
      shape(state, ago, r) {
        if (ago <= 15) {
          setProcess(state, 'ffmpeg', 7100, r.gaussian(42, 2), 500 * mib);
          setProcess(state, 'gzip', 7200, r.gaussian(38, 2), 12 * mib);
        }
      },
    }),
    expected: {
      kind: 'process',
      subject: 'ffmpeg',
      topK: 2,
      also: [{ kind: 'process', subject: 'gzip' }],
    },
    traits: ['several_causes'],
  };
}

function neighbourAndLocalHog(options: ScenarioOptions, random: SeededRandom): Scenario {
  const host = 'web-8';
  return {
    name: 'neighbour-and-local-hog',
    title: 'A training container and a local report job at once',
    host,
    rule: cpuRule(80, 5),
    payloads: oneHost(options, random, {
      host,
      service: 'web',
      shape(state, ago, r) {
        if (ago > 15) return;
        const train = r.gaussian(45, 2);
        setProcess(state, 'python3', 5100, train, 2 * gib);
        state.containers.push({
          name: 'ml-train',
          image: 'acme/train:0.9',
          status: 'running',
          cpu_percent: train,
          memory_usage: 2.1 * gib,
        });
        setProcess(state, 'report-worker', 3120, r.gaussian(34, 2), 310 * mib);
      },
    }),
    expected: {
      kind: 'container',
      subject: 'ml-train',
      topK: 2,
      also: [{ kind: 'process', subject: 'report-worker' }],
    },
    traits: ['several_causes', 'noisy_neighbour'],
  };
}

const builders = [
  cpuHogProcess,
  memoryLeak,
  diskFilling,
  noisyNeighbour,
  badDeploy,
  fleetWideSpike,
  flappingRule,
  restartingContainer,
  unexplainedSpike,
  backupJobMemory,
  localHogBusyPeer,
  firstSeenCpuHog,
  firstSeenMemoryLeak,
  firstSeenNoisyNeighbour,
  firstSeenRestartLoop,
  firstSeenDeploy,
  firstSeenRecentStart,
  processListingBegins,
  firstSeenUnexplained,
  noSnapshotFirstSeen,
  firstSeenBusyFleet,
  memoryNoisyNeighbour,
  loadNoisyNeighbour,
  deployAndCronHog,
  twoProcessesShareCpu,
  neighbourAndLocalHog,
];

/**
 * The incident scenarios, each from its own seeded random source (seed + its index), so one
 * scenario's data does not depend on another's. Deterministic for the same options.
 */
export function buildScenarios(options: ScenarioOptions): Scenario[] {
  const seed = options.seed ?? 20_240_601;
  return builders.map((build, i) => build(options, createSeededRandom(seed + i)));
}
