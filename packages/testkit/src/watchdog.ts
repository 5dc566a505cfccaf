/**
 * Runs one service process and guarantees its end: started by `startSupervised`, it spawns the
 * service, and kills it (then removes its temp dir) when told to stop (SIGTERM/SIGINT) or as soon
 * as the process that asked for it is gone, even if that one was killed with SIGKILL.
 *
 * argv[2] is a JSON `WatchdogSpec`.
 */
import { spawn } from 'node:child_process';
import { openSync, rmSync } from 'node:fs';
import type { WatchdogSpec } from './supervised-process.js';

const spec = JSON.parse(process.argv[2] ?? '{}') as WatchdogSpec;
const output = openSync(spec.logFile, 'a');
const child = spawn(spec.command, spec.args, {
  cwd: spec.cwd,
  env: spec.env,
  stdio: ['ignore', output, output],
  ...(spec.uid === undefined ? {} : { uid: spec.uid, gid: spec.gid }),
});

let stopping = false;
function cleanupAndExit(code: number): never {
  if (spec.removeOnExit) rmSync(spec.removeOnExit, { recursive: true, force: true });
  process.exit(code);
}

function stop(): void {
  if (stopping) return;
  stopping = true;
  if (child.exitCode !== null || child.signalCode !== null) cleanupAndExit(0);
  child.kill(spec.stopSignal);
  setTimeout(() => child.kill('SIGKILL'), spec.stopTimeoutMs).unref();
}

child.on('exit', (code, signal) => {
  cleanupAndExit(stopping ? 0 : (code ?? (signal === null ? 1 : 128)));
});
child.on('error', (err) => {
  process.stderr.write(`watchdog: cannot start ${spec.command}: ${err.message}\n`);
  cleanupAndExit(127);
});

process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.on('SIGHUP', stop);

// Signal 0 only checks that the owner still exists; once it is gone, nobody will stop us.
setInterval(() => {
  try {
    process.kill(spec.ownerPid, 0);
  } catch {
    stop();
  }
}, 250);
