import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';

/**
 * What every benchmark report carries besides its figures (the machine, the processes' warnings,
 * notes), and where the results go.
 */

export type MachineFacts = {
  os: string;
  cpuModel: string;
  cpuCount: number;
  totalMemoryBytes: number;
  node: string;
  /** 1, 5 and 15-minute load averages when the run started: other work on the box skews figures. */
  loadAverageAtStart: number[];
};

/** What every benchmark report carries besides its figures. */
export type ReportBase = {
  /** When the run started. */
  date: string;
  machine: MachineFacts;
  /** Log lines at warn or above from the processes the run started, by process. */
  logWarnings: Record<string, { count: number; first: string[] }>;
  notes: string[];
  logDir: string;
};

/** A report of benchmark `name` started at `startedAt`, with its own `fields`; a fresh log dir. */
export function createReport<F>(name: string, startedAt: Date, fields: F): ReportBase & F {
  return {
    date: startedAt.toISOString(),
    machine: machineFacts(),
    ...fields,
    logWarnings: {},
    notes: [],
    logDir: mkdtempSync(join(os.tmpdir(), `monitor-bench-${name}-`)),
  };
}

function machineFacts(): MachineFacts {
  const cpus = os.cpus();
  return {
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cpuCount: cpus.length,
    totalMemoryBytes: os.totalmem(),
    node: process.version,
    loadAverageAtStart: os.loadavg().map((v) => Math.round(v * 100) / 100),
  };
}

/** Lines at warn or above (pino level ≥ 40) or not JSON at all, in a process's output. */
export function scanLogWarnings(file: string): { count: number; first: string[] } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return { count: 0, first: [] };
  }
  const flagged: string[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const entry = JSON.parse(line) as { level?: unknown };
      const level = entry.level;
      const serious =
        typeof level === 'number'
          ? level >= 40
          : typeof level === 'string' && ['warn', 'error', 'fatal'].includes(level);
      if (serious) flagged.push(line);
    } catch {
      flagged.push(line);
    }
  }
  return { count: flagged.length, first: flagged.slice(0, 3) };
}

/** Notes in the report when the machine was busy before the run began. */
export function noteBusyMachine(report: ReportBase): void {
  const [load] = report.machine.loadAverageAtStart;
  if ((load ?? 0) > 0.5) {
    report.notes.push(
      `the machine was not idle at start (load average ${report.machine.loadAverageAtStart.join(' ')})`,
    );
  }
}

/**
 * Writes `report` as JSON to `out`, or else to `bench-results/<name>-2026-11-22T10-00-00Z.json`
 * (the run's start); the file's path.
 */
export function writeResults(report: ReportBase, name: string, out: string | undefined): string {
  const stamp = report.date.replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');
  const file = resolve(out ?? join('bench-results', `${name}-${stamp}.json`));
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}
