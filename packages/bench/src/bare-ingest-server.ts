/**
 * The single-payload ceiling of the benchmark, run in a process of its own like the gateway: a
 * bare `node:http` server that reads the body, JSON.parses it and validates it with the same zod
 * schema as the gateway, then answers 200. No auth, rate limit, Kafka or express: what is left
 * is the least any Node ingest endpoint on this machine must spend per request.
 *
 * PORT (env) is the port to listen on, on 127.0.0.1. GET answers 200 (readiness).
 */
import { createServer } from 'node:http';
import { parseIngestBody } from '@monitor/schemas';

const port = Number(process.env['PORT'] ?? '0');

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"detail":"invalid JSON"}');
      return;
    }
    const parsed = parseIngestBody(body);
    if (!parsed.success) {
      res.writeHead(422, { 'content-type': 'application/json' }).end('{"detail":"invalid body"}');
      return;
    }
    let events = 0;
    for (const payload of parsed.data) events += Object.keys(payload.metrics).length;
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ status: 'ok', events_accepted: events }));
  });
});

server.listen(port, '127.0.0.1');

const stop = (): void => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
