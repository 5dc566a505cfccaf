import { beforeAll, describe, expect, it } from 'vitest';
import type {
  AlertResponse,
  AlertRuleResponse,
  InvestigationDetailResponse,
  InvestigationListResponse,
  ServiceListResponse,
} from '@monitor/schemas';
import type { ApiExchange } from '@monitor/testkit/builders';
import {
  buildAlertRuleCreateRequest,
  createApiCall,
  problemBody,
  waitFor,
} from '@monitor/testkit/builders';
import type { ApiTarget } from '../api-target.js';
import { addKey, fireTestAlert, newOrganization } from '../api-target.js';
import { expectDocumentedAsServed } from '../openapi-conformance.js';
import type { Problem } from './suite-support.js';
import { backgroundWorkTimeoutMs, isoTime, unknownIds } from './suite-support.js';

/**
 * Investigations over HTTP: opened for an alert (once) and for a service over a range, completed
 * by the investigator that runs behind every target, listed, filtered and read, with their
 * validation and isolation between organizations. It works in organizations of its own; every
 * answer is checked against the served OpenAPI document at the end (the ingest through
 * `target().ingestUrl` included). Call it inside a describe whose beforeAll has set `target`.
 */
export function describeInvestigationsApi(target: () => ApiTarget, exchanges: ApiExchange[]): void {
  const call = createApiCall({ baseUrl: () => target().apiUrl, exchanges });
  const ingest = createApiCall({ baseUrl: () => target().ingestUrl, exchanges });

  describe('investigations', () => {
    const investigationsPath = '/api/v1/investigations';
    const minuteMs = 60_000;
    let orgId: string;
    let key: string;
    let readKey: string;
    let otherOrgKey: string;
    let otherOrgServiceId: string;
    let alert: AlertResponse;
    let serviceId: string;
    let alertInvestigation: InvestigationDetailResponse;
    let serviceInvestigation: InvestigationDetailResponse;
    /** The second investigation of the same service and range. */
    let repeatedInvestigationId: string;
    let serviceWindow: { from: string; to: string };

    /** Until the investigator has finished it (the investigator runs behind every target). */
    const finished = (id: string) =>
      waitFor(
        async () => {
          const reply = await call<InvestigationDetailResponse>(`${investigationsPath}/${id}`, {
            key,
          });
          expect(reply.status).toBe(200);
          const { status } = reply.body;
          return status === 'completed' || status === 'failed' ? reply.body : undefined;
        },
        backgroundWorkTimeoutMs,
        `investigation ${id} to finish`,
      );

    beforeAll(async () => {
      ({ orgId, key } = await newOrganization(target().db));
      readKey = await addKey(target().db, orgId, ['read']);
      const other = await newOrganization(target().db);
      otherOrgKey = other.key;
      const rule = await call<AlertRuleResponse>('/api/v1/alerts/rules', {
        key,
        method: 'POST',
        // `info` opens no investigation by itself: the POST below opens the first one.
        body: buildAlertRuleCreateRequest({
          name: 'load high',
          metric: 'load_average',
          threshold: 8,
          severity: 'info',
        }),
      });
      if (rule.status !== 201) throw new Error(`rule not created: ${rule.status}`);
      const fired = await fireTestAlert(target().db, {
        orgId: orgId,
        ruleId: rule.body.id,
        host: 'web-1',
      });
      alert = (await call<AlertResponse>(`/api/v1/alerts/${fired.id}`, { key })).body;

      // A host known only from what it reported: the writer stores it asynchronously.
      const now = Date.now();
      const ingested = await ingest('/api/v1/ingest', {
        key,
        method: 'POST',
        body: {
          host: 'db-1',
          timestamp: new Date(now - 30_000).toISOString(),
          metrics: { cpu_percent: 12.5, load_average: 0.4 },
          tags: { role: 'database' },
        },
      });
      if (ingested.status !== 200) throw new Error(`ingest answered ${ingested.status}`);
      serviceId = await waitFor(
        async () => {
          const listed = await call<ServiceListResponse>('/api/v1/services', { key });
          return listed.body.services.find((service) => service.name === 'db-1')?.id;
        },
        backgroundWorkTimeoutMs,
        'db-1 to be listed',
      );
      serviceWindow = {
        from: new Date(now - 15 * minuteMs).toISOString(),
        to: new Date(now).toISOString(),
      };
      // A service of another organization (created as firing an alert does).
      const otherRule = await call<AlertRuleResponse>('/api/v1/alerts/rules', {
        key: other.key,
        method: 'POST',
        body: buildAlertRuleCreateRequest({
          name: 'theirs',
          metric: 'load_average',
          threshold: 8,
          severity: 'info',
        }),
      });
      otherOrgServiceId = (
        await fireTestAlert(target().db, {
          orgId: other.orgId,
          ruleId: otherRule.body.id,
          host: 'db-1',
        })
      ).serviceId;
    });

    it('opens one for an alert: 202 and its Location; asking again answers the same one', async () => {
      const opened = await call<InvestigationDetailResponse>(investigationsPath, {
        key,
        method: 'POST',
        body: { alert_id: alert.id },
      });
      expect(opened.status).toBe(202);
      expect(opened.body).toEqual({
        id: expect.stringMatching(/^inv_[0-9A-Z]{26}$/),
        alert_id: alert.id,
        service_id: alert.service_id,
        title: 'load high on web-1',
        status: 'queued',
        findings: [],
        created_at: expect.stringMatching(isoTime),
        updated_at: expect.stringMatching(isoTime),
        completed_at: null,
        analysis: null,
        timeline: [],
        recommendations: [],
      });
      const location = opened.headers.get('location');
      expect(location).toBe(`${investigationsPath}/${opened.body.id}`);

      const again = await call<InvestigationDetailResponse>(investigationsPath, {
        key,
        method: 'POST',
        body: { alert_id: alert.id },
      });
      expect(again.status).toBe(202);
      expect(again.headers.get('location')).toBe(location);
      // The investigator may have started or finished it meanwhile: only the identity holds.
      expect(again.body).toMatchObject({
        id: opened.body.id,
        alert_id: alert.id,
        created_at: opened.body.created_at,
      });
      const read = await call<AlertResponse>(`/api/v1/alerts/${alert.id}`, { key });
      expect(read.body).toEqual({ ...alert, investigation_id: opened.body.id });
      alertInvestigation = opened.body;
    });

    it('opens one for a service over a range', async () => {
      const opened = await call<InvestigationDetailResponse>(investigationsPath, {
        key,
        method: 'POST',
        body: { service_id: serviceId, ...serviceWindow },
      });
      expect(opened.status).toBe(202);
      expect(opened.body).toEqual({
        id: expect.stringMatching(/^inv_[0-9A-Z]{26}$/),
        alert_id: null,
        service_id: serviceId,
        title: `db-1 from ${serviceWindow.from} to ${serviceWindow.to}`,
        status: 'queued',
        findings: [],
        created_at: expect.stringMatching(isoTime),
        updated_at: expect.stringMatching(isoTime),
        completed_at: null,
        analysis: null,
        timeline: [],
        recommendations: [],
      });
      expect(opened.headers.get('location')).toBe(`${investigationsPath}/${opened.body.id}`);
      // A range is not an alert: asking again opens another one.
      const another = await call<InvestigationDetailResponse>(investigationsPath, {
        key,
        method: 'POST',
        body: { service_id: serviceId, ...serviceWindow },
      });
      expect(another.status).toBe(202);
      expect(another.body.id).not.toBe(opened.body.id);
      serviceInvestigation = opened.body;
      repeatedInvestigationId = another.body.id;
    });

    it('completes both with a report: analysis, findings, timeline and recommendations', async () => {
      const reports: InvestigationDetailResponse[] = [];
      for (const opened of [alertInvestigation, serviceInvestigation]) {
        const report = await finished(opened.id);
        expect(report.status, opened.title).toBe('completed');
        expect(report, opened.title).toMatchObject({
          id: opened.id,
          alert_id: opened.alert_id,
          service_id: opened.service_id,
          title: opened.title,
          created_at: opened.created_at,
          completed_at: expect.stringMatching(isoTime),
          // Hosts of a fresh organization have no history: the analysis abstains, not guesses.
          analysis: {
            summary: expect.stringMatching(/\S/),
            root_cause: 'inconclusive',
            confidence: 0,
            method: expect.stringMatching(/^statistical/),
          },
        });
        expect(Date.parse(report.completed_at!)).toBeGreaterThanOrEqual(
          Date.parse(report.created_at),
        );
        expect(report.findings.length, opened.title).toBeGreaterThan(0);
        expect(report.recommendations.length, opened.title).toBeGreaterThan(0);
        const times = report.timeline.map((event) => Date.parse(event.at));
        expect(times).toEqual([...times].sort((a, b) => a - b));
        reports.push(report);
      }
      [alertInvestigation, serviceInvestigation] = reports as [
        InvestigationDetailResponse,
        InvestigationDetailResponse,
      ];
      // The alert's own window is on its timeline.
      expect(alertInvestigation.timeline).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ type: 'alert_started', at: alert.started_at }),
          expect.objectContaining({
            type: 'alert_fired',
            at: alert.fired_at,
            data: expect.objectContaining({ alert_id: alert.id, value: 97 }),
          }),
        ]),
      );
      expect((await finished(repeatedInvestigationId)).status).toBe('completed');
    });

    it('lists them newest first with their findings, filtered on request; reads one', async () => {
      const listed = await call<InvestigationListResponse>(investigationsPath, { key });
      expect(listed.status).toBe(200);
      expect(listed.body.investigations.map((each) => each.id)).toEqual([
        repeatedInvestigationId,
        serviceInvestigation.id,
        alertInvestigation.id,
      ]);
      expect(listed.body.pagination).toEqual({
        limit: 50,
        offset: 0,
        total: 3,
        has_more: false,
      });
      // A list item is the detail without analysis, timeline and recommendations.
      expect(listed.body.investigations[2]).toEqual({
        id: alertInvestigation.id,
        alert_id: alertInvestigation.alert_id,
        service_id: alertInvestigation.service_id,
        title: alertInvestigation.title,
        status: 'completed',
        findings: alertInvestigation.findings,
        created_at: alertInvestigation.created_at,
        updated_at: alertInvestigation.updated_at,
        completed_at: alertInvestigation.completed_at,
      });

      const ofAlert = await call<InvestigationListResponse>(
        `${investigationsPath}?alert_id=${alert.id}`,
        { key },
      );
      expect(ofAlert.body.investigations.map((each) => each.id)).toEqual([alertInvestigation.id]);
      const ofService = await call<InvestigationListResponse>(
        `${investigationsPath}?service_id=${serviceId}&status=completed&limit=1&offset=1`,
        { key },
      );
      expect(ofService.body.investigations.map((each) => each.id)).toEqual([
        serviceInvestigation.id,
      ]);
      expect(ofService.body.pagination).toEqual({
        limit: 1,
        offset: 1,
        total: 2,
        has_more: false,
      });
      const queued = await call<InvestigationListResponse>(`${investigationsPath}?status=queued`, {
        key,
      });
      expect(queued.body.investigations).toEqual([]);
      const refused = await call<Problem>(`${investigationsPath}?status=done`, { key });
      expect(refused).toMatchObject({ status: 422, body: problemBody(422) });
      expect(refused.body.errors?.map((error) => error.path)).toEqual(['status']);

      const one = await call<InvestigationDetailResponse>(
        `${investigationsPath}/${serviceInvestigation.id}`,
        { key: readKey },
      );
      expect(one).toMatchObject({ status: 200, body: serviceInvestigation });
    });

    it('is 404 for an unknown, a malformed or another organization’s investigation', async () => {
      for (const [id, who] of [
        [unknownIds.investigation, key],
        ['inv_nope', key],
        [alertInvestigation.id, otherOrgKey],
      ] as const) {
        const reply = await call<Problem>(`${investigationsPath}/${id}`, { key: who });
        expect(reply, id).toMatchObject({ status: 404, body: problemBody(404) });
      }
    });

    it('answers 422 naming the field for an alert or service the organization does not have', async () => {
      const open = (who: string, body: unknown) =>
        call<Problem>(investigationsPath, { key: who, method: 'POST', body });
      for (const [who, body, path, message] of [
        [otherOrgKey, { alert_id: alert.id }, 'alert_id', 'names no alert of this organization'],
        [key, { alert_id: unknownIds.alert }, 'alert_id', 'names no alert of this organization'],
        [
          key,
          { service_id: otherOrgServiceId, ...serviceWindow },
          'service_id',
          'names no service of this organization',
        ],
        [
          otherOrgKey,
          { service_id: serviceId, ...serviceWindow },
          'service_id',
          'names no service of this organization',
        ],
      ] as const) {
        expect(await open(who, body), JSON.stringify(body)).toMatchObject({
          status: 422,
          body: { status: 422, errors: [{ path, message }] },
        });
      }
      // Nothing was opened by them.
      const listed = await call<InvestigationListResponse>(investigationsPath, { key });
      expect(listed.body.pagination.total).toBe(3);
    });

    it('answers 422 naming the field for a bad body, and 403 without the write scope', async () => {
      const open = (body: unknown, who = key) =>
        call<Problem>(investigationsPath, { key: who, method: 'POST', body });
      const hourAgo = new Date(Date.now() - 60 * minuteMs).toISOString();
      for (const [body, errors] of [
        [
          { alert_id: alert.id, service_id: serviceId },
          [{ path: 'service_id', message: 'is not allowed with alert_id' }],
        ],
        [{ service_id: serviceId, from: hourAgo }, [{ path: 'to', message: 'is required' }]],
        [
          { service_id: serviceId, from: serviceWindow.to, to: serviceWindow.from },
          [{ path: 'to', message: 'must be after from' }],
        ],
        [{}, [{ path: '', message: 'must give alert_id, or service_id with from and to' }]],
        [{ alert_id: 'web-1' }, [{ path: 'alert_id', message: expect.any(String) }]],
        [[], [{ path: '', message: 'must be a JSON object' }]],
      ] as const) {
        const refused = await open(body);
        expect(refused, JSON.stringify(body)).toMatchObject({
          status: 422,
          body: problemBody(422),
        });
        expect(refused.body.errors, JSON.stringify(body)).toEqual(errors);
      }
      expect(await open({ alert_id: alert.id }, readKey)).toMatchObject({
        status: 403,
        body: problemBody(403),
      });
      const listed = await call<InvestigationListResponse>(investigationsPath, { key });
      expect(listed.body.pagination.total).toBe(3);
    });

    it('answers only what the served OpenAPI document says', async () => {
      expect(exchanges.length).toBeGreaterThan(30);
      await expectDocumentedAsServed(target().apiUrl, exchanges);
    });
  });
}
