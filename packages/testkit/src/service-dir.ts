import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(tmpdir(), 'monitor-testkit');
const ownerFile = 'watchdog.pid';
const orphanAfterMs = 60_000;

/**
 * A fresh temp dir for one service process. Dirs left by runs whose watchdog died with SIGKILL
 * are removed first, so nothing accumulates across killed runs.
 */
export function createServiceDir(name: string, owner?: { uid: number; gid: number }): string {
  mkdirSync(root, { recursive: true, mode: 0o755 });
  removeOrphanedDirs();
  const dir = mkdtempSync(join(root, `${name}-`));
  if (owner) chownSync(dir, owner.uid, owner.gid);
  return dir;
}

/** Records which watchdog owns a dir, so a later run can tell an orphan from a live service. */
export function markOwner(dir: string, watchdogPid: number): void {
  if (existsSync(dir)) writeFileSync(join(dir, ownerFile), String(watchdogPid));
}

function removeOrphanedDirs(): void {
  for (const entry of readdirSync(root)) {
    const dir = join(root, entry);
    try {
      const pid = Number(readFileSync(join(dir, ownerFile), 'utf8'));
      if (!isAlive(pid)) rmSync(dir, { recursive: true, force: true });
    } catch {
      // No owner yet: either being set up right now or abandoned before its watchdog started.
      const stat = statSync(dir, { throwIfNoEntry: false });
      if (stat && Date.now() - stat.mtimeMs > orphanAfterMs)
        rmSync(dir, { recursive: true, force: true });
    }
  }
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
