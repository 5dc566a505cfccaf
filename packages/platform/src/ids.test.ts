import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createIdGenerator, idPrefixes, idSchema, isId, newId, type Id } from './ids.js';

const idShape = /^(svc|rul|alr|inv|org|key|ntf|sil)_[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

describe('newId', () => {
  it.each(idPrefixes)('makes a %s_ id followed by a ULID', (prefix) => {
    const id: Id<typeof prefix> = newId(prefix);
    expect(id).toMatch(idShape);
    expect(id.startsWith(`${prefix}_`)).toBe(true);
  });

  it('makes ids that sort in creation order within one millisecond', () => {
    const ids = Array.from({ length: 1000 }, () => newId('alr'));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });
});

describe('createIdGenerator', () => {
  it('sorts ids by time across milliseconds', () => {
    let now = Date.parse('2025-01-01T00:00:00Z');
    const ids = createIdGenerator(() => now);
    const earlier = ids.newId('svc');
    now += 1;
    const later = ids.newId('svc');
    expect(earlier < later).toBe(true);
    expect(earlier.slice(4, 14)).not.toBe(later.slice(4, 14));
  });

  it('keeps order for any sequence of clock readings, including a clock stepping back', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1_700_000_000_000, max: 1_700_000_000_100 }), {
          minLength: 2,
          maxLength: 50,
        }),
        (times) => {
          let index = 0;
          const ids = createIdGenerator(() => times[index++] ?? 0);
          const made = times.map(() => ids.newId('inv'));
          expect([...made].sort()).toEqual(made);
          expect(new Set(made).size).toBe(made.length);
        },
      ),
    );
  });
});

describe('isId', () => {
  it('accepts a generated id of the same prefix only', () => {
    const id = newId('rul');
    expect(isId('rul', id)).toBe(true);
    expect(isId('alr', id)).toBe(false);
  });

  const ulid = '01HZX3A4B5C6D7E8F9G0H1J2K3';

  it('accepts a well-formed id it did not make', () => {
    expect(isId('rul', `rul_${ulid}`)).toBe(true);
  });

  it.each([
    ['a missing ULID', 'rul_'],
    ['a missing underscore', `rul${ulid}`],
    ['a lowercase ULID', `rul_${ulid.toLowerCase()}`],
    ['a short ULID', `rul_${ulid.slice(1)}`],
    ['a long ULID', `rul_${ulid}0`],
    ['the excluded letter U', `rul_${ulid.slice(0, 25)}U`],
    ['a time beyond the ULID range', `rul_8${ulid.slice(1)}`],
    ['a number', 42],
    ['null', null],
  ])('rejects %s', (_name, value) => {
    expect(isId('rul', value)).toBe(false);
  });
});

describe('idSchema', () => {
  it('parses a matching id and rejects others with a message', () => {
    const schema = idSchema('svc');
    const id = newId('svc');
    expect(schema.parse(id)).toBe(id);
    const result = schema.safeParse(newId('org'));
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe('must be an id of the form svc_<ULID>');
  });
});
