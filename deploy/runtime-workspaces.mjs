// Run in the image's build stage, after the build: keeps in package.json only the workspaces the
// running service needs, and deletes the others, so that `npm prune --omit=dev` also drops what
// only the tests, the benchmarks and the users' testcontainers module depend on (testcontainers,
// playwright-core...). npm keeps every workspace's own dependencies otherwise: a
// workspace counts as a dependency of the root, whatever its role.
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';

const notRuntime = ['packages/bench', 'packages/testkit', 'packages/testcontainers'];
const manifest = JSON.parse(readFileSync('package.json', 'utf8'));
manifest.workspaces = readdirSync('packages')
  .map((name) => `packages/${name}`)
  .filter((path) => !notRuntime.includes(path));
writeFileSync('package.json', `${JSON.stringify(manifest, null, 2)}\n`);
for (const path of notRuntime) rmSync(path, { recursive: true, force: true });
