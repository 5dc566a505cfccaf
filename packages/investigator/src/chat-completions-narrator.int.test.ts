// No services: a local node:http server speaks the chat-completions shape.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { InvestigationReport } from '@monitor/schemas';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createChatCompletionsNarrator } from './chat-completions-narrator.js';

const report: InvestigationReport = {
  findings: [
    {
      title: 'Likely cause: process burner',
      detail: 'process burner (pid 42) grew its CPU from 1% to 75%',
      evidence: { cause: { kind: 'process', subject: 'burner' }, baseline: 1, firing: 75 },
    },
  ],
  analysis: {
    summary: 'cpu_percent on web-1 rose from 15 to 90. Most likely cause: process burner (pid 42).',
    root_cause: 'process burner (pid 42) grew its CPU from 1% to 75%',
    confidence: 0.93,
    method: 'statistical',
  },
  timeline: [{ at: '2025-06-01T12:00:00.000Z', type: 'alert_started', description: 'x', data: {} }],
  recommendations: [
    {
      title: 'Check process burner (pid 42) on web-1',
      detail: 'It uses 75% CPU.',
      priority: 'high',
    },
  ],
};

type Handler = (body: string, req: IncomingMessage, res: ServerResponse) => void;

describe('createChatCompletionsNarrator against a chat-completions server', () => {
  let server: Server;
  let baseUrl: string;
  let handler: Handler;
  const requests: { url: string | undefined; auth: string | undefined; body: string }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        requests.push({ url: req.url, auth: req.headers.authorization, body });
        handler(body, req, res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  beforeEach(() => {
    requests.length = 0;
  });

  const answer =
    (content: string): Handler =>
    (_body, _req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content } }] }));
    };
  const narrator = (timeoutMs = 2000) =>
    createChatCompletionsNarrator({ baseUrl, apiKey: 'sk-test', model: 'tiny-model', timeoutMs });

  it('sends only the computed result and takes back the wording', async () => {
    handler = answer(
      JSON.stringify({
        summary: 'Process burner (pid 42) is eating the CPU of web-1: 1% → 75%.',
        recommendations: [{ title: 'Stop burner (pid 42)', detail: 'Renice or stop it on web-1.' }],
      }),
    );
    const { report: narrated, outcome } = await narrator().narrate(report);
    expect(outcome).toBe('rewritten');
    expect(narrated.analysis).toEqual({
      ...report.analysis,
      summary: 'Process burner (pid 42) is eating the CPU of web-1: 1% → 75%.',
      method: 'statistical+llm:tiny-model',
    });
    expect(narrated.recommendations).toEqual([
      { title: 'Stop burner (pid 42)', detail: 'Renice or stop it on web-1.', priority: 'high' },
    ]);
    expect(narrated.findings).toEqual(report.findings);
    expect(narrated.timeline).toEqual(report.timeline);
    const [request] = requests;
    expect(request?.url).toBe('/v1/chat/completions');
    expect(request?.auth).toBe('Bearer sk-test');
    const sent = JSON.parse(request?.body ?? '{}') as {
      model: string;
      messages: { role: string; content: string }[];
    };
    expect(sent.model).toBe('tiny-model');
    expect(JSON.parse(sent.messages[1]?.content ?? '')).toEqual({
      analysis: {
        summary: report.analysis.summary,
        root_cause: report.analysis.root_cause,
        confidence: 0.93,
      },
      findings: report.findings,
      recommendations: report.recommendations,
    });
  });

  it('keeps the computed text when the server does not answer in time', async () => {
    handler = () => undefined;
    const startedMs = Date.now();
    const { report: narrated, outcome } = await narrator(200).narrate(report);
    expect(Date.now() - startedMs).toBeLessThan(2000);
    expect(outcome).toBe('failed');
    expect(narrated.analysis).toEqual({
      ...report.analysis,
      method: 'statistical (narrative failed: timeout)',
    });
    expect(narrated.recommendations).toEqual(report.recommendations);
  });

  it.each([
    ['not JSON at all', 'Sure! The root cause is burner.'],
    ['the wrong shape', JSON.stringify({ text: 'hello' })],
    ['a missing recommendation', JSON.stringify({ summary: 'ok', recommendations: [] })],
  ])('keeps the computed text on garbage: %s', async (_name, content) => {
    handler = answer(content);
    const { report: narrated } = await narrator().narrate(report);
    expect(narrated.analysis.method).toBe('statistical (narrative failed: malformed answer)');
    expect(narrated.analysis.summary).toBe(report.analysis.summary);
  });

  it('rejects a narrative that invents numbers', async () => {
    handler = answer(
      JSON.stringify({
        summary: 'burner used 99% CPU',
        recommendations: [{ title: 'Stop burner', detail: 'Now.' }],
      }),
    );
    const { report: narrated } = await narrator().narrate(report);
    expect(narrated.analysis.method).toBe('statistical (narrative failed: invented numbers)');
  });

  it('keeps the computed text on an HTTP error and on a body that is not JSON', async () => {
    handler = (_body, _req, res) => {
      res.writeHead(500);
      res.end('boom');
    };
    expect((await narrator().narrate(report)).report.analysis.method).toBe(
      'statistical (narrative failed: http 500)',
    );
    handler = (_body, _req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"choices": [');
    };
    expect((await narrator().narrate(report)).report.analysis.method).toBe(
      'statistical (narrative failed: malformed answer)',
    );
  });
});
