import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findTimescaleExtension } from './postgres-server.js';

describe('findTimescaleExtension', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  /** A PostgreSQL install laid out like pg_config reports it, with a pg_config script. */
  function install(files: { library: boolean; control?: string }): string {
    const root = mkdtempSync(join(tmpdir(), 'pg-install-'));
    dirs.push(root);
    const bin = join(root, 'bin');
    const lib = join(root, 'lib');
    const share = join(root, 'share');
    mkdirSync(bin);
    mkdirSync(lib);
    mkdirSync(join(share, 'extension'), { recursive: true });
    writeFileSync(
      join(bin, 'pg_config'),
      `#!/bin/sh\ncase "$1" in --pkglibdir) echo ${lib};; --sharedir) echo ${share};; esac\n`,
      { mode: 0o755 },
    );
    if (files.library) writeFileSync(join(lib, 'timescaledb.so'), '');
    if (files.control !== undefined) {
      writeFileSync(join(share, 'extension', 'timescaledb.control'), files.control);
    }
    return bin;
  }

  it('finds the version of an installed extension (loader library and control file)', () => {
    const bin = install({ library: true, control: "comment = 'x'\ndefault_version = '2.28.3'\n" });
    expect(findTimescaleExtension(bin)).toEqual({ version: '2.28.3' });
  });

  it('finds none on a PostgreSQL without it, or with only half of its files', () => {
    expect(findTimescaleExtension(install({ library: false }))).toBeUndefined();
    expect(findTimescaleExtension(install({ library: true }))).toBeUndefined();
    expect(
      findTimescaleExtension(install({ library: false, control: "default_version = '2.28.3'" })),
    ).toBeUndefined();
  });
});
