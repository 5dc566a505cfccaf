import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

/** The documented vitest example is this package's container test, character for character. */
it('docs/development.md shows exactly the example that CI runs', () => {
  const readme = readFileSync(new URL('../../../docs/development.md', import.meta.url), 'utf8');
  const example = readFileSync(
    new URL('./readme-example.container.test.ts', import.meta.url),
    'utf8',
  );
  const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]);
  expect(blocks).toContain(example);
});
