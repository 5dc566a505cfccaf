/** The API specification's example ingest payload: containers, processes and tags. */
export const specExamplePayload = {
  host: 'web-1',
  timestamp: '2026-11-22T10:00:00Z',
  metrics: { cpu_percent: 40, memory_percent: 61.2, disk_percent: 70 },
  tags: { environment: 'prod', service: 'api', region: 'eu-west-1' },
  docker_containers: [
    { name: 'api', image: 'api:1.2', status: 'running', cpu_percent: 3.5, memory_usage: 1024 },
  ],
  processes: [{ name: 'node', pid: 42, cpu_percent: 12, memory_rss: 2048 }],
};
