import type { Resource } from './consumer-changes.js';
import { round } from './statistics.js';

const mib = 1024 * 1024;

/** An ISO 8601 UTC timestamp. */
export function iso(timeMs: number): string {
  return new Date(timeMs).toISOString();
}

/** `12:04Z`-style time of day for sentences (the ISO time is in the evidence). */
export function clockTime(timeMs: number): string {
  return `${iso(timeMs).slice(11, 16)}Z`;
}

/** A consumption figure: `87.4%` CPU, `1.52 GiB` / `310 MiB` memory. */
export function formatResource(resource: Resource, value: number): string {
  if (resource === 'cpu') return `${round(value)}%`;
  if (Math.abs(value) >= 1024 * mib) return `${round(value / (1024 * mib))} GiB`;
  return `${round(value / mib)} MiB`;
}

/** `5 min`, `2 h 10 min`. */
export function formatDuration(ms: number): string {
  const minutes = Math.round(Math.abs(ms) / 60_000);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return rest === 0 ? `${hours} h` : `${hours} h ${rest} min`;
}

export function resourceWord(resource: Resource): string {
  return resource === 'cpu' ? 'CPU' : 'memory';
}
