import type { InvestigationReport } from '@monitor/schemas';
import type { NarratedReport, Narrator } from './narrator.js';

export type ChatCompletionsNarratorOptions = {
  /** The API root of an OpenAI-compatible server, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  apiKey: string;
  model: string;
  /** The whole call, answer included, must finish within this. */
  timeoutMs: number;
  /** Injected for tests; the global fetch otherwise. */
  fetch?: typeof fetch;
};

const instructions = [
  'You rewrite the narrative of an automated incident investigation for an on-call engineer.',
  'The user message is the computed result as JSON. Answer with a JSON object only:',
  '{"summary": string, "recommendations": [{"title": string, "detail": string}, ...]}',
  'with exactly one recommendation per input recommendation, in the same order.',
  'Keep every name (process, pid, container, image, host, rule, tag) and every number exactly as',
  'given; do not add numbers, causes or facts that are not in the input. Be brief and concrete.',
].join('\n');

type Narrative = { summary: string; recommendations: { title: string; detail: string }[] };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown, maxLength: number): string | undefined {
  return typeof value === 'string' && value.trim() !== '' && value.length <= maxLength
    ? value.trim()
    : undefined;
}

/** The message content of a chat-completions answer. */
function contentOf(body: unknown): string | undefined {
  if (!isRecord(body) || !Array.isArray(body.choices)) return undefined;
  const [choice] = body.choices as unknown[];
  if (!isRecord(choice) || !isRecord(choice.message)) return undefined;
  return typeof choice.message.content === 'string' ? choice.message.content : undefined;
}

/** The narrative the model was asked for, or undefined when it answered anything else. */
function parseNarrative(value: unknown): Narrative | undefined {
  if (!isRecord(value) || !Array.isArray(value.recommendations)) return undefined;
  const summary = text(value.summary, 4000);
  const recommendations: Narrative['recommendations'] = [];
  for (const item of value.recommendations as unknown[]) {
    if (!isRecord(item)) return undefined;
    const title = text(item.title, 300);
    const detail = text(item.detail, 3000);
    if (title === undefined || detail === undefined) return undefined;
    recommendations.push({ title, detail });
  }
  return summary === undefined ? undefined : { summary, recommendations };
}

/** Thrown inside `narrate` to carry the short reason that goes into analysis.method. */
class NarrativeFailure extends Error {}

const numberPattern = /\d+(?:\.\d+)?/g;

/** Numbers of `text` that appear nowhere in the computed result: the model made them up. */
function inventedNumbers(text: string, computed: string): string[] {
  const known = new Set(computed.match(numberPattern) ?? []);
  return (text.match(numberPattern) ?? []).filter((n) => !known.has(n));
}

/**
 * A narrator over an OpenAI-compatible chat-completions endpoint (POST {baseUrl}/chat/completions).
 * It sends only the computed report (no samples, no snapshots) and takes back only wording: the
 * new summary and recommendation titles and details, rejected whole if malformed, if the count of
 * recommendations differs, or if they contain a number the computed result does not.
 */
export function createChatCompletionsNarrator(options: ChatCompletionsNarratorOptions): Narrator {
  const doFetch = options.fetch ?? fetch;
  const url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;

  async function rewrite(report: InvestigationReport): Promise<InvestigationReport> {
    const computed = JSON.stringify({
      analysis: {
        summary: report.analysis.summary,
        root_cause: report.analysis.root_cause,
        confidence: report.analysis.confidence,
      },
      findings: report.findings,
      recommendations: report.recommendations,
    });
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), options.timeoutMs);
    let body: unknown;
    try {
      const response = await doFetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${options.apiKey}`,
        },
        body: JSON.stringify({
          model: options.model,
          temperature: 0,
          response_format: { type: 'json_object' },
          messages: [
            { role: 'system', content: instructions },
            { role: 'user', content: computed },
          ],
        }),
        signal: controller.signal,
      });
      if (!response.ok) throw new NarrativeFailure(`http ${response.status}`);
      body = await response.json().catch(() => {
        throw new NarrativeFailure('malformed answer');
      });
    } catch (err) {
      if (err instanceof NarrativeFailure) throw err;
      throw new NarrativeFailure(controller.signal.aborted ? 'timeout' : 'unreachable');
    } finally {
      clearTimeout(timer);
    }
    let narrative: Narrative | undefined;
    try {
      narrative = parseNarrative(JSON.parse(stripFence(contentOf(body) ?? '')));
    } catch {
      narrative = undefined;
    }
    if (narrative?.recommendations.length !== report.recommendations.length) {
      throw new NarrativeFailure('malformed answer');
    }
    const texts = [
      narrative.summary,
      ...narrative.recommendations.flatMap((r) => [r.title, r.detail]),
    ];
    if (texts.some((text) => inventedNumbers(text, computed).length > 0)) {
      throw new NarrativeFailure('invented numbers');
    }
    return {
      ...report,
      analysis: {
        ...report.analysis,
        summary: narrative.summary,
        method: `${report.analysis.method}+llm:${options.model}`,
      },
      recommendations: report.recommendations.map((computedRecommendation, i) => ({
        ...computedRecommendation,
        title: narrative.recommendations[i]?.title ?? computedRecommendation.title,
        detail: narrative.recommendations[i]?.detail ?? computedRecommendation.detail,
      })),
    };
  }

  return {
    async narrate(report): Promise<NarratedReport> {
      try {
        return { report: await rewrite(report), outcome: 'rewritten' };
      } catch (err) {
        const reason = err instanceof NarrativeFailure ? err.message : 'unexpected error';
        return {
          report: {
            ...report,
            analysis: {
              ...report.analysis,
              method: `${report.analysis.method} (narrative failed: ${reason})`,
            },
          },
          outcome: 'failed',
        };
      }
    },
  };
}

/** Models often wrap JSON in a ``` fence despite being asked not to. */
function stripFence(content: string): string {
  const fenced = /^\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$/.exec(content);
  return fenced?.[1] ?? content;
}
