import { readFileSync } from 'node:fs';
import type { BenchProcess } from './bench-process.js';
import type { ObservedJoin } from './failover-report.js';

/** A consumer process's JSON log lines with their wall-clock time (empty before it wrote any). */
function logEntries(proc: BenchProcess): { atMs: number; line: string }[] {
  let text: string;
  try {
    text = readFileSync(proc.logFile, 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').flatMap((line) => {
    try {
      const { time } = JSON.parse(line) as { time: string | number };
      return [{ atMs: new Date(time).getTime(), line }];
    } catch {
      // not JSON, or the line being written
      return [];
    }
  });
}

/**
 * The "joined consumer group" lines a process logged (info) between two wall-clock instants: one
 * per consumer and generation, so a consumer that logs none kept its membership meanwhile.
 */
export function joinsAfter(
  proc: BenchProcess,
  topic: string,
  fromWallMs: number,
  toWallMs: number,
): ObservedJoin[] {
  const joins: ObservedJoin[] = [];
  for (const { atMs, line } of logEntries(proc)) {
    if (!line.includes('joined consumer group')) continue;
    if (atMs < fromWallMs || atMs >= toWallMs) continue;
    const entry = JSON.parse(line) as {
      groupId: string;
      memberId: string;
      assignment: Record<string, number[]>;
    };
    joins.push({
      process: proc.name,
      groupId: entry.groupId,
      memberId: entry.memberId,
      afterMs: atMs - fromWallMs,
      partitions: entry.assignment[topic] ?? [],
    });
  }
  return joins;
}

/** How many lines a process logged from `fromWallMs` on that contain `text`. */
export function countLogLines(proc: BenchProcess, text: string, fromWallMs: number): number {
  return logEntries(proc).filter((entry) => entry.atMs >= fromWallMs && entry.line.includes(text))
    .length;
}
