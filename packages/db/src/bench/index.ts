// What the benchmarks read and write beside the roles' stores: its own entry point
// (`@monitor/db/bench`), for the one audience that measures storage, maintains chunks by hand
// and seeds rows straight into the tables. Every function raises the typed errors of
// `@monitor/db`, never the driver's.
import { translatingDbErrors } from '../core/database-errors.js';
import * as maintenance from '../maintenance/chunk-maintenance.js';
import * as inventory from '../storage/chunk-inventory.js';
import * as columns from '../storage/compressed-columns.js';
import * as windows from '../storage/policy-windows.js';
import * as sizes from '../storage/storage-sizes.js';
import * as seeding from './bench-seeding.js';
import * as explain from './explain-history-read.js';
import * as servicesPage from './explain-services-page.js';
import * as keptTierChunks from './kept-tier-chunks.js';
import * as tiers from '../storage/kept-tiers.js';
import * as checks from './run-checks.js';
import * as histograms from '../histograms/histogram-storage.js';

export const measureTimescaleSizes = translatingDbErrors(sizes.measureTimescaleSizes);
export const measurePlainSizes = translatingDbErrors(sizes.measurePlainSizes);
export type { RelationSize, StorageSizes } from '../storage/storage-sizes.js';
export const measureHistogramStorage = translatingDbErrors(histograms.measureHistogramStorage);

export const listChunkParts = translatingDbErrors(inventory.listChunkParts);
export const listRawChunks = translatingDbErrors(inventory.listRawChunks);
export const readRawChunkIntervalMs = translatingDbErrors(inventory.readRawChunkIntervalMs);
export const measureCompressedColumns = translatingDbErrors(columns.measureCompressedColumns);
export type { CompressedColumn } from '../storage/compressed-columns.js';

export const readCompressionWindows = translatingDbErrors(windows.readCompressionWindows);
export const readConsolidationJobHours = translatingDbErrors(windows.readConsolidationJobHours);
export const readRawRetentionDays = translatingDbErrors(windows.readRawRetentionDays);

export const pausePolicyJobs = translatingDbErrors(maintenance.pausePolicyJobs);
export const refreshAggregates = translatingDbErrors(maintenance.refreshAggregates);
export const compressOlderChunks = translatingDbErrors(maintenance.compressOlderChunks);
export const consolidateSampleChunks = translatingDbErrors(maintenance.consolidateSampleChunks);
export const recompressSampleChunks = translatingDbErrors(maintenance.recompressSampleChunks);
export const dropTimestampRawChunks = translatingDbErrors(maintenance.dropTimestampRawChunks);
export const vacuumAnalyze = translatingDbErrors(maintenance.vacuumAnalyze);
export const listFinishedStorageMoves = translatingDbErrors(maintenance.listFinishedStorageMoves);

export const insertSeedServices = translatingDbErrors(seeding.insertSeedServices);
export const insertSeedSnapshots = translatingDbErrors(seeding.insertSeedSnapshots);
export const insertSeedAlerts = translatingDbErrors(seeding.insertSeedAlerts);
export const ensureSeries = translatingDbErrors(seeding.ensureSeries);
export const writeFloat8Layout = translatingDbErrors(seeding.writeFloat8Layout);
export const copyBinarySamples = translatingDbErrors(seeding.copyBinarySamples);
export type { SeedAlert, SeedService } from './bench-seeding.js';

export const countSamples = translatingDbErrors(checks.countSamples);
export const countHistograms = translatingDbErrors(checks.countHistograms);
export const countSamplesBetween = translatingDbErrors(checks.countSamplesBetween);
export const countStoredRows = translatingDbErrors(checks.countStoredRows);
export const countAlertsAndSnapshots = translatingDbErrors(checks.countAlertsAndSnapshots);
export const listAllServices = translatingDbErrors(checks.listAllServices);
export const listAllSeries = translatingDbErrors(checks.listAllSeries);
export const readBackendPid = translatingDbErrors(checks.readBackendPid);
export const readMaxValue = translatingDbErrors(checks.readMaxValue);
export const listHostValues = translatingDbErrors(checks.listHostValues);
export const countDuplicateSamples = translatingDbErrors(checks.countDuplicateSamples);
export const countFiredAlerts = translatingDbErrors(checks.countFiredAlerts);
export const listRuleAlerts = translatingDbErrors(checks.listRuleAlerts);
export const countAlertsOfOtherRules = translatingDbErrors(checks.countAlertsOfOtherRules);
export const countAlertsNotNamed = translatingDbErrors(checks.countAlertsNotNamed);
export const readCommittedRecords = translatingDbErrors(checks.readCommittedRecords);
export const commitWriteProbe = translatingDbErrors(checks.commitWriteProbe);
export const countEvaluatorStates = translatingDbErrors(checks.countEvaluatorStates);

export const explainHistoryRead = translatingDbErrors(explain.explainHistoryRead);
export type { HistoryExplain } from './explain-history-read.js';
export const explainServicesPage = translatingDbErrors(servicesPage.explainServicesPage);

export const maintainKeptTiers = translatingDbErrors(tiers.maintainKeptTiers);
export const keptTiers = tiers.keptTiers;
export type { KeptTier } from '../storage/kept-tiers.js';
export const fillKeptTierChunk = translatingDbErrors(keptTierChunks.fillKeptTierChunk);
export const compressKeptTierChunk = translatingDbErrors(keptTierChunks.compressKeptTierChunk);
