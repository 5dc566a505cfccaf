import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU accounting from Linux's /proc, so the report can say who used the two cores during a
 * phase. Everything here returns `undefined` where /proc is missing rather than failing the run.
 */

/** USER_HZ: the unit of /proc's CPU times; 100 on every mainstream Linux build. */
const ticksPerSecond = 100;

/**
 * The child of `parentPid` that runs `command` (its argv[0]). Matching the command matters: a
 * watchdog run through tsx has a second child, esbuild's service, which the first child found
 * could be.
 */
export function findChildPid(parentPid: number, command: string): number | undefined {
  return processTable().find((entry) => entry.ppid === parentPid && argv0(entry.pid) === command)
    ?.pid;
}

function argv0(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0', 1)[0];
  } catch {
    return undefined;
  }
}

/** The parent of `pid`, e.g. PostgreSQL's postmaster from the pid of one of its backends. */
export function parentPid(pid: number): number | undefined {
  const fields = statFields(pid);
  return fields === undefined ? undefined : Number(fields[1]);
}

/**
 * The first descendant of `ancestorPid` whose command name (/proc/<pid>/comm) is `command`: how
 * the run finds the Kafka broker's JVM and redis-server that testkit started under it.
 */
export function findDescendantPid(ancestorPid: number, command: string): number | undefined {
  const table = processTable();
  const tree = descendantsIn(table, ancestorPid);
  return table.find((entry) => tree.has(entry.pid) && entry.command === command)?.pid;
}

/**
 * CPU seconds of `rootPid` and everything under it, the children it and they already reaped
 * included (cutime, cstime): PostgreSQL's postmaster with its backends, short-lived ones too.
 * Differences between two readings are exact as long as no member of the tree dies unreaped.
 */
export function processTreeCpuSeconds(rootPid: number | undefined): number | undefined {
  if (rootPid === undefined) return undefined;
  const table = processTable();
  if (!table.some((entry) => entry.pid === rootPid)) return undefined;
  const tree = descendantsIn(table, rootPid);
  let ticks = 0;
  for (const entry of table) if (tree.has(entry.pid)) ticks += entry.treeTicks;
  return ticks / ticksPerSecond;
}

/** Resident memory (VmRSS) of the process, in bytes. */
export function processRssBytes(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
    return kib === undefined ? undefined : Number(kib) * 1024;
  } catch {
    return undefined;
  }
}

/**
 * Proportional set size of `rootPid` and its descendants, in bytes: shared pages (PostgreSQL's
 * shared buffers) count once over the tree, where summing each process's RSS would count them
 * in every backend.
 */
export function processTreePssBytes(rootPid: number | undefined): number | undefined {
  if (rootPid === undefined) return undefined;
  const tree = descendantsIn(processTable(), rootPid);
  let kib = 0;
  let read = false;
  for (const pid of tree) {
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      const pss = /^Pss:\s+(\d+) kB$/m.exec(rollup)?.[1];
      if (pss !== undefined) {
        kib += Number(pss);
        read = true;
      }
    } catch {
      // Exited between the listing and the read: it holds no memory any more.
    }
  }
  return read ? kib * 1024 : undefined;
}

type ProcessEntry = {
  pid: number;
  ppid: number;
  command: string;
  /** utime + stime + cutime + cstime, in ticks. */
  treeTicks: number;
};

function processTable(): ProcessEntry[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const table: ProcessEntry[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    table.push({
      pid,
      ppid: Number(fields[1]),
      command: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
      // utime(11) stime(12) cutime(13) cstime(14), numbered as in statFields
      treeTicks: [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0),
    });
  }
  return table;
}

/** `rootPid` and every process below it in `table`. */
function descendantsIn(table: readonly ProcessEntry[], rootPid: number): Set<number> {
  const children = new Map<number, number[]>();
  for (const entry of table) {
    const siblings = children.get(entry.ppid);
    if (siblings) siblings.push(entry.pid);
    else children.set(entry.ppid, [entry.pid]);
  }
  const tree = new Set<number>([rootPid]);
  const queue = [rootPid];
  for (let pid = queue.pop(); pid !== undefined; pid = queue.pop()) {
    for (const child of children.get(pid) ?? []) {
      if (!tree.has(child)) {
        tree.add(child);
        queue.push(child);
      }
    }
  }
  return tree;
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
