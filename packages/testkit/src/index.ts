export { getFreePort } from './free-port.js';
export { isDockerAvailable } from './docker-probe.js';
export type { PartitionOffsets, RestartableKafka } from './kafka.js';
export { ensureKafkaJars, startRestartableKafka } from './kafka.js';
export type { RestartablePostgres } from './postgres.js';
export { startRestartablePostgres } from './postgres.js';
export type { SchemathesisCommand } from './schemathesis.js';
export {
  ensureSchemathesis,
  findSchemathesis,
  schemathesisInstallCommand,
  schemathesisVersion,
} from './schemathesis.js';
export type { RunningService, ServiceLauncher, ServiceName, ServiceOrigin } from './service.js';
export { serviceEnvNames, serviceNames } from './service.js';
export type { ServicesLog, StartServicesOptions, StartedServices } from './start-services.js';
export { startServices } from './start-services.js';
export type { SupervisedProcess } from './supervised-process.js';
export { nodeScript, startSupervised } from './supervised-process.js';
export type { TestDatabase } from './test-database.js';
export { createTestDatabase } from './test-database.js';

export { createSeededRandom } from './seeded-random.js';
export type { SeededRandom } from './seeded-random.js';
