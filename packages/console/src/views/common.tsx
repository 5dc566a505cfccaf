import type { ComponentChildren } from 'preact';
import { describeError } from '../api-client.js';

export function ErrorNotice(props: { error: unknown }) {
  if (props.error === undefined) return null;
  return (
    <p role="alert" class="error">
      {describeError(props.error)}
    </p>
  );
}

export function Loading(props: { what: string }) {
  return (
    <p class="muted" role="status">
      Loading {props.what}…
    </p>
  );
}

export function StatusBadge(props: { status: string }) {
  return <span class={`badge status-${props.status}`}>{props.status}</span>;
}

export function Time(props: { at: string | null | undefined }) {
  if (props.at === null || props.at === undefined) return <span class="muted">—</span>;
  const date = new Date(props.at);
  return (
    <time dateTime={props.at} title={props.at}>
      {date.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' })}
    </time>
  );
}

export function formatNumber(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  if (Number.isInteger(value)) return value.toLocaleString('en-US');
  return value.toLocaleString('en-US', { maximumFractionDigits: 3 });
}

export function formatBytes(value: number | undefined): string {
  if (value === undefined) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let size = value;
  let unit = 0;
  while (size >= 1024 && unit < units.length - 1) {
    size /= 1024;
    unit += 1;
  }
  return `${size.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

export function Field(props: {
  id: string;
  label: string;
  error?: string | undefined;
  help?: string;
  children: ComponentChildren;
}) {
  return (
    <div class={`field${props.error === undefined ? '' : ' invalid'}`}>
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.help !== undefined && (
        <p class="help" id={`${props.id}-help`}>
          {props.help}
        </p>
      )}
      {props.error !== undefined && (
        <p class="field-error" id={`${props.id}-error`} role="alert">
          {props.error}
        </p>
      )}
    </div>
  );
}

/** aria-describedby for a Field's control: its help and its error when there are. */
export function describedBy(
  id: string,
  help: boolean,
  error: string | undefined,
): string | undefined {
  const ids = [help ? `${id}-help` : undefined, error === undefined ? undefined : `${id}-error`];
  const joined = ids.filter((each) => each !== undefined).join(' ');
  return joined === '' ? undefined : joined;
}
