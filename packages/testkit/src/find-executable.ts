import { execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';

type ExecutableSpec = {
  /** The command's name on the PATH, e.g. `prometheus`. */
  name: string;
  /** An environment variable that, when set, names the binary instead. */
  envName: string;
  /** Where Debian's package installs it, tried after the PATH. */
  debianPath: string;
  /** Arguments that make the binary print something and exit 0, to tell it from a directory. */
  probeArgs: string[];
  /** What to do about it, for the error message: which package to install. */
  installHint: string;
};

/** `$envName`, else `name` on the PATH, else `debianPath`; throws saying how to get one. */
export function findExecutable(spec: ExecutableSpec): string {
  const fromEnv = process.env[spec.envName];
  const candidates =
    fromEnv !== undefined && fromEnv !== ''
      ? [fromEnv]
      : [
          ...(process.env['PATH'] ?? '')
            .split(':')
            .filter((dir) => dir !== '')
            .map((dir) => join(dir, spec.name)),
          spec.debianPath,
        ];
  const found = candidates.find((path) => isExecutable(path, spec.probeArgs));
  if (found !== undefined) return found;
  const lookedFor =
    fromEnv !== undefined && fromEnv !== ''
      ? fromEnv
      : `${spec.name} on the PATH and ${spec.debianPath}`;
  throw new Error(
    `no ${spec.name} executable (looked for ${lookedFor}): ${spec.installHint}, ` +
      `or point ${spec.envName} at it`,
  );
}

function isExecutable(path: string, probeArgs: string[]): boolean {
  try {
    accessSync(path, constants.X_OK);
    // A directory passes X_OK too; running the binary settles it.
    execFileSync(path, probeArgs, { stdio: 'ignore', timeout: 5_000 });
    return true;
  } catch {
    return false;
  }
}
