import { metricNamePattern } from '@monitor/schemas';
import type { RejectReason } from './decoded-host-samples.js';

/** Longest name /ingest's pattern admits (its `{0,127}` after the first character). */
const maxMetricNameLength = 128;

/** Every character /ingest's pattern refuses anywhere; one per code point (`u`), so 🙂 → `_`. */
const invalidCharacters = /[^A-Za-z0-9_.:-]/gu;
const validFirstCharacter = /^[A-Za-z_]/;

export type MetricNameResult = { ok: true; name: string } | { ok: false; reason: RejectReason };

/**
 * An agent's metric name as /ingest would take it: characters the /ingest pattern refuses become
 * `_` (the contract's rule), and a name that starts with a character the pattern allows only
 * later (a digit, `.`, `:` or `-`) gets a `_` in front rather than losing that character (as
 * Prometheus' OTLP translation does). What rewriting cannot fix is a reason: an empty name, one
 * longer than 128 characters, `__proto__`.
 */
export function toMetricName(raw: string): MetricNameResult {
  if (raw === '') return { ok: false, reason: 'no_metric_name' };
  let name = raw.replace(invalidCharacters, '_');
  if (!validFirstCharacter.test(name)) name = `_${name}`;
  if (name.length > maxMetricNameLength) return { ok: false, reason: 'metric_name_too_long' };
  if (!metricNamePattern.test(name)) return { ok: false, reason: 'invalid_metric_name' };
  return { ok: true, name };
}
