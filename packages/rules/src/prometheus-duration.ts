const units: readonly [string, number][] = [
  ['y', 365 * 24 * 60 * 60 * 1000],
  ['w', 7 * 24 * 60 * 60 * 1000],
  ['d', 24 * 60 * 60 * 1000],
  ['h', 60 * 60 * 1000],
  ['m', 60 * 1000],
  ['s', 1000],
  ['ms', 1],
];

const pattern = /^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$/;

/**
 * A Prometheus duration (model.ParseDuration: `1h30m`, `5m`, `0`; units largest first, each at
 * most once) in ms. Throws Error with Prometheus' text on anything else.
 */
export function parsePrometheusDuration(text: string): number {
  if (text === '0') return 0;
  const match = pattern.exec(text);
  if (text === '' || match === null) throw new Error(`not a valid duration string: "${text}"`);
  let total = 0;
  units.forEach(([, ms], i) => {
    const count = match[i + 1];
    if (count !== undefined) total += Number(count) * ms;
  });
  if (total > Number.MAX_SAFE_INTEGER) throw new Error('duration out of range');
  return total;
}

/** A duration in ms as Prometheus prints one (model.Duration.String): `1h30m`, `0s`. */
export function formatPrometheusDuration(ms: number): string {
  if (ms === 0) return '0s';
  let rest = ms;
  let out = '';
  for (const [unit, size] of units) {
    const count = Math.floor(rest / size);
    if (count > 0) {
      out += `${count}${unit}`;
      rest -= count * size;
    }
  }
  return out;
}
