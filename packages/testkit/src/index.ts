export { getFreePort } from './free-port.js';
export type { RestartableKafka } from './kafka.js';
export { startRestartableKafka } from './kafka.js';
export type { RestartablePostgres } from './postgres.js';
export { startRestartablePostgres } from './postgres.js';
export type { PatroniCluster } from './patroni.js';
export { startPatroniCluster } from './patroni.js';
export type { BackupSource } from './base-backup.js';
export { startBackupSource } from './base-backup.js';
export type { ReplicatedPostgres } from './replicated-postgres.js';
export { startReplicatedPostgres } from './replicated-postgres.js';
export { runSchemathesis, schemathesisVersion } from './schemathesis.js';
export type { ServiceName } from './service.js';
export { startServices } from './start-services.js';
export type { SupervisedProcess } from './supervised-process.js';
export { startSupervised } from './supervised-process.js';
export type { TestDatabase } from './test-database.js';
export { createTestDatabase } from './test-database.js';

export { createSeededRandom } from './seeded-random.js';
export { runPromtool } from './promtool.js';
export type { SeededRandom } from './seeded-random.js';

// The real agents for the protocol endpoints' integration tests.
export type { AgentProcess } from './agent-process.js';
export { startCollectd } from './collectd.js';
export { startNodeExporter } from './node-exporter.js';
export { startPrometheus } from './prometheus.js';
export type { RunningAlertmanager } from './alertmanager.js';
export { alertmanagerMessages, startAlertmanager } from './alertmanager.js';
export { startTelegraf } from './telegraf.js';
export { startCollector } from './otelcol.js';
export type { NativeHistogramExporter } from './native-histogram-exporter.js';
export { startNativeHistogramExporter } from './native-histogram-exporter.js';

// The official PromQL compliance tester, built from its vendored source.
export type { ComplianceTester } from './promql-compliance-tester.js';
export { ensureComplianceTester } from './promql-compliance-tester.js';
export type { AlertGeneratorTester } from './alert-generator-tester.js';
export { ensureAlertGeneratorTester, runAlertGeneratorTester } from './alert-generator-tester.js';

// Local stand-ins for Slack, customers' webhooks and a mail server, for notification tests.
export type { HttpReceiver, HttpRequestReceived, SmtpReceiver } from './notification-receivers.js';
export { receiverNetwork, startHttpReceiver, startSmtpReceiver } from './notification-receivers.js';
