/** One label; a label set never holds an empty value (Prometheus drops those). */
type Label = { readonly name: string; readonly value: string };

/** A label set sorted by name, without duplicates or empty values. */
export type Labels = readonly Label[];

export const metricNameLabel = '__name__';

const keys = new WeakMap<Labels, string>();

/** A string that two label sets share exactly when they are equal (cached per array). */
export function labelsKey(labels: Labels): string {
  let key = keys.get(labels);
  if (key === undefined) {
    key = '';
    for (const { name, value } of labels) key += `${name}\u0000${value}\u0001`;
    keys.set(labels, key);
  }
  return key;
}

/** A label set from any record or pair list: sorted, empty values dropped. */
export function labelsFrom(record: Readonly<Record<string, string>>): Labels {
  const out: Label[] = [];
  for (const name of Object.keys(record)) {
    const value = record[name]!;
    if (value !== '') out.push({ name, value });
  }
  out.sort((a, b) => compareStrings(a.name, b.name));
  return out;
}

/** Byte order for ASCII and code-unit order otherwise, close to Go's string comparison. */
function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function getLabel(labels: Labels, name: string): string {
  for (const label of labels) if (label.name === name) return label.value;
  return '';
}

/** The label set as Prometheus' JSON `metric` object. */
export function labelsToRecord(labels: Labels): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { name, value } of labels) out[name] = value;
  return out;
}

/** Prometheus' `labels.Compare`: label by label, name then value, shorter first. */
export function compareLabels(a: Labels, b: Labels): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x.name !== y.name) return x.name < y.name ? -1 : 1;
    if (x.value !== y.value) return x.value < y.value ? -1 : 1;
  }
  return a.length - b.length;
}

/** A copy with `name` set to `value` (removed when `value` is empty). */
export function withLabel(labels: Labels, name: string, value: string): Labels {
  const out = labels.filter((label) => label.name !== name);
  if (value !== '') {
    out.push({ name, value });
    out.sort((a, b) => compareStrings(a.name, b.name));
  }
  return out;
}

export function withoutLabels(labels: Labels, names: readonly string[]): Labels {
  return labels.filter((label) => !names.includes(label.name));
}

export function keepLabels(labels: Labels, names: readonly string[]): Labels {
  return labels.filter((label) => names.includes(label.name));
}

const withoutNames = new WeakMap<Labels, Labels>();

/** The label set without `__name__` (cached per array: every arithmetic result asks). */
export function dropMetricName(labels: Labels): Labels {
  let out = withoutNames.get(labels);
  if (out === undefined) {
    out = labels.some((l) => l.name === metricNameLabel)
      ? labels.filter((l) => l.name !== metricNameLabel)
      : labels;
    withoutNames.set(labels, out);
  }
  return out;
}
