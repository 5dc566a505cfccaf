// No @services: role `all` and the CLI bring their own embedded PostgreSQL under MONITOR_DATA_DIR.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { postIngest } from './testing/ingest-client.js';
import type { RoleProcess } from './testing/role-process.js';
import { runCommand, startRoleProcess } from './testing/role-process.js';

// As root the embedded server runs as `postgres`, which must be able to enter the directory.
const dataDir = mkdtempSync(join(tmpdir(), 'monitor-embedded-cli-'));
chmodSync(dataDir, 0o755);
/** Only MONITOR_DATA_DIR: no DATABASE_URL, as a newcomer's shell after `npm start`. */
const env = { MONITOR_DATA_DIR: dataDir };
const postmasterPid = join(dataDir, 'postgres', 'pgdata', 'postmaster.pid');
const started: RoleProcess[] = [];

afterAll(async () => {
  await Promise.all(started.map((proc) => proc.stop()));
  rmSync(dataDir, { recursive: true, force: true });
});

function parse<T>(stdout: string): T {
  return JSON.parse(stdout) as T;
}

describe('the admin CLI without DATABASE_URL', () => {
  let orgId = '';
  let key = '';

  it('starts the embedded PostgreSQL for the command when no server runs, and stops it after', async () => {
    const org = parse<{ id: string; name: string }>(
      await runCommand(['orgs', 'create', 'acme'], env),
    );
    expect(org).toMatchObject({ id: expect.stringMatching(/^org_/) as unknown, name: 'acme' });
    orgId = org.id;
    expect(existsSync(postmasterPid)).toBe(false);
  });

  it('creates a key in the store of the running `all`, which then accepts it', async () => {
    // A bootstrap key in the environment too: start-up ensures it, and it must not be logged.
    const bootstrapKey = `bootstrap-${randomBytes(12).toString('hex')}`;
    const all = await startRoleProcess('all', { ...env, MONITOR_BOOTSTRAP_API_KEY: bootstrapKey });
    started.push(all);
    expect(all.output()).toMatch(
      /"databaseUrl":"postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres","passwordFile":"[^"]+".*"msg":"embedded PostgreSQL started"/,
    );

    const created = parse<{ key: string; orgId: string; scopes: string[] }>(
      await runCommand(['keys', 'create', '--org', orgId, '--scopes', 'ingest'], env),
    );
    expect(created).toMatchObject({ orgId, scopes: ['ingest'] });
    key = created.key;

    const ingest = await postIngest(
      all.baseUrl,
      { host: 'web-1', metrics: { cpu_percent: 42.5 } },
      { key },
    );
    expect(ingest).toMatchObject({ status: 200, body: { status: 'ok', events_accepted: 1 } });
    const bootstrapIngest = await postIngest(
      all.baseUrl,
      { host: 'web-2', metrics: { cpu_percent: 7 } },
      { key: bootstrapKey },
    );
    expect(bootstrapIngest.status).toBe(200);

    // The request's log line names the org, and no line anywhere holds the key.
    await expect.poll(() => all.output()).toMatch(/"path":"\/api\/v1\/ingest","status":200/);
    const line = all
      .output()
      .split('\n')
      .find((text) => text.includes('"path":"/api/v1/ingest"'));
    expect(JSON.parse(line ?? '{}')).toMatchObject({ msg: 'request', method: 'POST', orgId });
    // A failed login is logged too, without the key it tried.
    const wrongKey = `${key.slice(0, -4)}xxxx`;
    const refused = await postIngest(
      all.baseUrl,
      { host: 'web-1', metrics: { cpu_percent: 1 } },
      { key: wrongKey },
    );
    expect(refused.status).toBe(401);
    await expect.poll(() => all.output()).toMatch(/"path":"\/api\/v1\/ingest","status":401/);
    // No line of the start, the ingest or the failed login holds a key or the store's password.
    const [, passwordFile] = /"passwordFile":"([^"]+)"/.exec(all.output()) ?? [];
    const password = readFileSync(passwordFile ?? '', 'utf8').trim();
    expect(password.length).toBeGreaterThan(16);
    for (const secret of [key, wrongKey, bootstrapKey, password, encodeURIComponent(password)]) {
      expect(all.output()).not.toContain(secret);
    }

    expect(await all.stop()).toBe(0);
    expect(existsSync(postmasterPid)).toBe(false);
  });

  it('stops cleanly when Ctrl-C reaches the embedded PostgreSQL too and the signal comes twice', async () => {
    // A terminal's Ctrl-C goes to the whole foreground group: the embedded server takes it as a
    // fast shutdown, and `npm start`'s tsx relays it to the process that already has it.
    const all = await startRoleProcess('all', env);
    started.push(all);
    const ingest = await postIngest(
      all.baseUrl,
      { host: 'web-3', metrics: { cpu_percent: 3 } },
      { key },
    );
    expect(ingest.status).toBe(200);
    const postmaster = Number(readFileSync(postmasterPid, 'utf8').split('\n')[0]);
    all.signal('SIGINT');
    process.kill(postmaster, 'SIGINT');
    // The relayed copy comes once the first is being handled.
    await expect.poll(() => all.output(), { interval: 1 }).toMatch(/"msg":"shutting down"/);
    all.signal('SIGINT');
    expect(await all.exited()).toBe(0);
    expect(all.output()).toMatch(/"ok":true,"failed":\[\],"pending":\[\],"msg":"stopped"/);
    expect(existsSync(postmasterPid)).toBe(false);
  });

  it('takes a postmaster.pid left by a crash for stale and starts the store itself', async () => {
    // What a killed server leaves: a pid that no longer runs, a port nobody listens on.
    const deadPid = spawnSync('true').pid;
    writeFileSync(
      postmasterPid,
      `${deadPid}\n${join(dataDir, 'postgres', 'pgdata')}\n0\n1\n${dataDir}\n127.0.0.1\n0 0\nready   \n`,
      { mode: 0o644 },
    );
    const keys = parse<{ orgId: string; scopes: string[] }[]>(
      await runCommand(['keys', 'list', '--org', orgId], env),
    );
    expect(keys).toEqual([expect.objectContaining({ orgId, scopes: ['ingest'] })]);
    expect(existsSync(postmasterPid)).toBe(false);
  });
});
