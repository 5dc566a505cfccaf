import { describe, expect, it } from 'vitest';
import { seriesIdArray } from './copy-out.js';

describe('series ids in a COPY statement', () => {
  it('writes stored ids as a bigint array and refuses anything else', () => {
    expect(seriesIdArray(['1', '42'])).toBe("'{1,42}'::bigint[]");
    expect(() => seriesIdArray(['1', "2}'); drop table samples; --"])).toThrow(/not a series id/);
    expect(() => seriesIdArray(['-1'])).toThrow(/not a series id/);
  });
});
