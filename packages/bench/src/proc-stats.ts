import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU accounting from Linux's /proc, so the report can say who used the two cores during a
 * phase. Everything here returns `undefined` where /proc is missing rather than failing the run.
 */

/** USER_HZ: the unit of /proc's CPU times; 100 on every mainstream Linux build. */
const ticksPerSecond = 100;

/** The first process whose parent is `parentPid`. */
export function findChildPid(parentPid: number): number | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    if (fields !== undefined && Number(fields[1]) === parentPid) return Number(entry);
  }
  return undefined;
}

/** User + system CPU seconds the process has used so far. */
export function processCpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  const fields = statFields(pid);
  if (fields === undefined) return undefined;
  // After the command: state(0) ppid(1) … utime(11) stime(12), as proc(5) numbers them 3…15.
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}

type MachineCpuTimes = { busySeconds: number; totalSeconds: number };

type CpuSnapshot = {
  /** CPU seconds so far by process name, this process's under `self`. */
  seconds: Record<string, number>;
  machine: MachineCpuTimes | undefined;
};

/** The CPU seconds `processes`, this process and the whole machine have used so far. */
export function cpuSnapshot(
  processes: readonly { name: string; pid: number | undefined }[],
): CpuSnapshot {
  const seconds: Record<string, number> = {};
  for (const proc of processes) {
    const used = processCpuSeconds(proc.pid);
    if (used !== undefined) seconds[proc.name] = used;
  }
  const self = process.cpuUsage();
  seconds['self'] = (self.user + self.system) / 1e6;
  return { seconds, machine: machineCpuTimes() };
}

/** CPU seconds used between two snapshots by each process in both, and the machine's busy share. */
export function cpuUsedBetween(
  before: CpuSnapshot,
  after: CpuSnapshot,
): { seconds: Record<string, number>; machineBusyPercent: number | undefined } {
  const seconds: Record<string, number> = {};
  for (const [name, used] of Object.entries(after.seconds)) {
    const start = before.seconds[name];
    if (start !== undefined) seconds[name] = used - start;
  }
  const total =
    before.machine && after.machine ? after.machine.totalSeconds - before.machine.totalSeconds : 0;
  const busy =
    before.machine && after.machine ? after.machine.busySeconds - before.machine.busySeconds : 0;
  return { seconds, machineBusyPercent: total > 0 ? (100 * busy) / total : undefined };
}

/** Busy and total CPU seconds of the whole machine since boot, summed over every core. */
function machineCpuTimes(): MachineCpuTimes | undefined {
  let line: string | undefined;
  try {
    line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
  } catch {
    return undefined;
  }
  if (line === undefined || !line.startsWith('cpu ')) return undefined;
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already in user)
  const total = ticks.slice(0, 8).reduce((sum, value) => sum + value, 0);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  return { busySeconds: (total - idle) / ticksPerSecond, totalSeconds: total / ticksPerSecond };
}

function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may itself contain spaces or parentheses.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}
