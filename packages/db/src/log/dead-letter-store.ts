import type { Database } from '../core/database.js';

/** A record set aside for good, as it came from its log. Independent of any bus. */
type DeadLetterRecord = {
  topic: string;
  partition: number;
  /** Its offset in the source partition (decimal string, int64). */
  offset: string;
  key: string | null;
  value: Buffer | null;
  headers: Readonly<Record<string, string>>;
};

export type DeadLetterStore = {
  /**
   * Stores `record` with the reason it was set aside, durably (resolves after the commit).
   * Takes any bytes: keys, headers and reasons are stored even when PostgreSQL's text cannot
   * hold them as they are.
   */
  send(record: DeadLetterRecord, reason: string): Promise<void>;
};

/**
 * Dead letters in a table, for the embedded mode, whose bus lives in memory: what the writer or
 * the evaluator sets aside survives restarts there too (`select * from dead_letters`).
 */
export function createDeadLetterStore(db: Database): DeadLetterStore {
  return {
    async send(record, reason) {
      await db.sql`
        insert into dead_letters (topic, partition, source_offset, key, value, headers, reason)
        values (
          ${storableText(record.topic)}, ${record.partition}, ${record.offset},
          ${record.key === null ? null : Buffer.from(record.key, 'utf8')},
          ${record.value},
          ${db.sql.json(storableHeaders(record.headers))},
          ${storableText(reason)}
        )
      `;
    },
  };
}

/** NUL cannot be stored in text or jsonb: it is shown as U+FFFD (the bytes are in key/value). */
function storableText(text: string): string {
  return text.replaceAll('\u0000', '\uFFFD');
}

function storableHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[storableText(name)] = storableText(value);
  }
  return out;
}
