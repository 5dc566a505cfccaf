import type { TransactionSql } from '../core/database.js';
import type { StorageEngine } from '../storage/engine.js';
import { newestSampleTimeMs } from '../storage/newest-sample-time.js';
import { run } from '../storage/ddl.js';
import { sampleValueFunction } from '../storage/scaled-value.js';

/** The storage engine supplies what differs between TimescaleDB and plain PostgreSQL. */
type MigrationContext = { engine: StorageEngine };

/**
 * One schema change, applied once, in its own transaction, in version order. Never edit a
 * migration that may have run somewhere: add the next version instead.
 */
export type Migration = {
  version: number;
  name: string;
  up(sql: TransactionSql, context: MigrationContext): Promise<void>;
};

const organizationsAndApiKeys: Migration = {
  version: 1,
  name: 'organizations_and_api_keys',
  up: (sql) =>
    run(sql, [
      `create table organizations (
        id text primary key,
        name text not null,
        created_at timestamptz not null default now()
      )`,
      // key_hash is SHA-256 of the plaintext key; its unique index is the lookup path.
      `create table api_keys (
        id text primary key,
        org_id text not null references organizations (id) on delete cascade,
        name text not null,
        key_hash bytea not null unique,
        key_prefix text not null,
        scopes text[] not null
          check (cardinality(scopes) > 0 and scopes <@ array['ingest', 'read', 'write']),
        created_at timestamptz not null default now(),
        revoked_at timestamptz
      )`,
      `create index api_keys_org_id_created_at_idx on api_keys (org_id, created_at desc)`,
    ]),
};

const services: Migration = {
  version: 2,
  name: 'services',
  up: (sql) =>
    run(sql, [
      // One row per monitored host, upserted by the writer. metrics holds the latest value of
      // each metric and metric_times its sample time in epoch ms, so a late sample never
      // overwrites a newer value. The unique (org_id, name) index serves the list order.
      // Every batch updates every active service: half-empty pages let those updates be HOT
      // (no index entries to add, less bloat), measured 15-25% cheaper.
      `create table services (
        id text primary key,
        org_id text not null,
        name text not null,
        tags jsonb not null default '{}',
        metrics jsonb not null default '{}',
        metric_times jsonb not null default '{}',
        last_seen timestamptz not null,
        created_at timestamptz not null default now(),
        constraint services_org_id_name_key unique (org_id, name)
      ) with (fillfactor = 50)`,
      // jsonb_path_ops serves `tags @> '{"env":"prod"}'`, the tag filter.
      `create index services_tags_idx on services using gin (tags jsonb_path_ops)`,
    ]),
};

const samplesAndSnapshots: Migration = {
  version: 3,
  name: 'samples_and_snapshots',
  up: (sql, { engine }) => engine.createSampleTables(sql),
};

const rollups: Migration = {
  version: 4,
  name: 'rollups',
  up: (sql, { engine }) => engine.createRollups(sql),
};

const consumerOffsets: Migration = {
  version: 5,
  name: 'consumer_offsets',
  up: (sql) =>
    run(sql, [
      // The writer stores each partition's next offset in the transaction of its batch, so a
      // replay after a crash skips what is already stored without touching the samples.
      `create table consumer_offsets (
        group_id text not null,
        topic text not null,
        partition int not null,
        next_offset bigint not null,
        primary key (group_id, topic, partition)
      )`,
    ]),
};

const alerts: Migration = {
  version: 6,
  name: 'alerts',
  up: (sql) =>
    run(sql, [
      // One row per fired alert (pending windows live in the evaluator's state). rule_name,
      // condition, threshold and severity are copied from the rule when it fires, so an alert
      // reads the same after its rule changed or was deleted.
      `create table alerts (
        id text primary key,
        org_id text not null,
        rule_id text not null,
        rule_name text not null,
        service_id text not null,
        host text not null,
        metric text not null,
        condition text not null check (condition in ('greater_than', 'greater_than_or_equal',
          'less_than', 'less_than_or_equal', 'equal', 'not_equal')),
        threshold double precision not null,
        severity text not null check (severity in ('critical', 'warning', 'info')),
        status text not null check (status in ('active', 'resolved')),
        value double precision not null,
        started_at timestamptz not null,
        fired_at timestamptz not null,
        resolved_at timestamptz,
        investigation_id text,
        check ((status = 'resolved') = (resolved_at is not null))
      )`,
      // At most one active alert per (rule, service), whatever replays or rebalances do.
      `create unique index alerts_rule_id_service_id_active_key on alerts (rule_id, service_id)
        where status = 'active'`,
      `create index alerts_service_id_status_idx on alerts (service_id, status)`,
      // The services list derives every service's status from its org's active alerts.
      `create index alerts_org_id_active_idx on alerts (org_id, service_id) include (severity)
        where status = 'active'`,
    ]),
};

const alertRulesAndNotifications: Migration = {
  version: 7,
  name: 'alert_rules_and_notifications',
  up: (sql) =>
    run(sql, [
      // Deleted rules stay as rows (deleted_at) so their alerts keep a rule to point at and so
      // evaluators polling for changes see deletions like any other change. `revision` comes
      // from one sequence and is renewed by every change: the sum over all rows strictly grows
      // with each committed change, whatever order concurrent changes commit in, which makes
      // it a cheap change fingerprint for the evaluators' poll.
      `create sequence alert_rule_revisions`,
      `create table alert_rules (
        id text primary key,
        org_id text not null references organizations (id) on delete cascade,
        name text not null,
        metric text not null,
        condition text not null check (condition in ('greater_than', 'greater_than_or_equal',
          'less_than', 'less_than_or_equal', 'equal', 'not_equal')),
        threshold double precision not null,
        duration_minutes int not null check (duration_minutes between 0 and 1440),
        severity text not null check (severity in ('critical', 'warning', 'info')),
        channels text[] not null default '{}'
          check (channels <@ array['slack', 'email', 'webhook']),
        scope jsonb not null default '{}',
        enabled boolean not null default true,
        revision bigint not null default nextval('alert_rule_revisions'),
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        deleted_at timestamptz
      )`,
      // The rules list: an org's live rules, newest first.
      `create index alert_rules_org_id_id_idx on alert_rules (org_id, id desc)
        where deleted_at is null`,
      // The channels an alert fired with: its resolution notifies the same ones, even after the
      // rule changed or was deleted.
      `alter table alerts add column channels text[] not null default '{}'`,
      `create index alerts_org_id_id_idx on alerts (org_id, id desc)`,
      `create index alerts_rule_id_idx on alerts (rule_id)`,
      // The evaluator's checkpoint: the state of each (rule, host) window, written in the same
      // transaction as the alerts it caused and the consumer offsets it reached.
      `create table evaluator_states (
        org_id text not null,
        host text not null,
        rule_id text not null,
        state jsonb not null,
        updated_at timestamptz not null default now(),
        primary key (org_id, host, rule_id)
      )`,
      // Targets per organization and channel type; config is validated by the API.
      `create table notification_channels (
        org_id text not null references organizations (id) on delete cascade,
        type text not null check (type in ('slack', 'email', 'webhook')),
        config jsonb not null,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        primary key (org_id, type)
      )`,
      // The durable outbox: one row per (alert, transition, channel), written in the transaction
      // that fired or resolved the alert, drained by the notifier. The unique key makes replays
      // harmless; idempotency_key (alert_id:transition) goes out with every message.
      `create table notifications (
        id text primary key,
        org_id text not null,
        alert_id text not null,
        transition text not null check (transition in ('fired', 'resolved')),
        channel text not null check (channel in ('slack', 'email', 'webhook')),
        idempotency_key text not null,
        payload jsonb not null,
        status text not null default 'pending'
          check (status in ('pending', 'delivered', 'failed')),
        attempts int not null default 0,
        next_attempt_at timestamptz not null default now(),
        lease_until timestamptz,
        last_error text,
        created_at timestamptz not null default now(),
        delivered_at timestamptz,
        constraint notifications_alert_id_transition_channel_key
          unique (alert_id, transition, channel)
      )`,
      `create index notifications_due_idx on notifications (next_attempt_at)
        where status = 'pending'`,
      `create table notification_attempts (
        notification_id text not null references notifications (id) on delete cascade,
        attempt int not null,
        attempted_at timestamptz not null,
        outcome text not null check (outcome in ('delivered', 'failed')),
        detail text not null,
        duration_ms int not null,
        primary key (notification_id, attempt)
      )`,
    ]),
};

const investigations: Migration = {
  version: 8,
  name: 'investigations',
  up: (sql) =>
    run(sql, [
      // window_from..window_to is the incident window the analysis explains (for an alert:
      // started_at..fired_at). lease_until bounds how long a crashed investigator keeps one
      // `running`; attempts bounds the retries of transient failures.
      `create table investigations (
        id text primary key,
        org_id text not null,
        alert_id text,
        service_id text not null,
        title text not null,
        status text not null default 'queued'
          check (status in ('queued', 'running', 'completed', 'failed')),
        window_from timestamptz not null,
        window_to timestamptz not null,
        findings jsonb not null default '[]',
        analysis jsonb,
        timeline jsonb not null default '[]',
        recommendations jsonb not null default '[]',
        attempts int not null default 0,
        lease_until timestamptz,
        last_error text,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        completed_at timestamptz
      )`,
      // One investigation per alert, whatever replays do.
      `create unique index investigations_alert_id_key on investigations (alert_id)
        where alert_id is not null`,
      `create index investigations_org_id_id_idx on investigations (org_id, id desc)`,
      `create index investigations_claimable_idx on investigations (created_at)
        where status in ('queued', 'running')`,
    ]),
};

const investigationEvidencePositions: Migration = {
  version: 9,
  name: 'investigation_evidence_positions',
  up: (sql) =>
    run(sql, [
      // The evaluator fires from the sample stream, often before the writer has stored the
      // same samples. When an alert opens an investigation it records how far the evaluators
      // had read each samples partition ([{topic, partition, next_offset}]); the investigator
      // starts only once the writer's stored offsets reach them (or after a bounded wait), so
      // the analysis sees the samples that made the alert fire.
      `alter table investigations add column evidence_positions jsonb not null default '[]'`,
    ]),
};

const servicesPageIndex: Migration = {
  version: 10,
  name: 'services_page_index',
  up: (sql) =>
    run(sql, [
      // The services list picks a page's ids in name order before reading those rows whole:
      // with the id in the index that is an index-only scan, so a deep offset walks the index
      // instead of sorting the organization (bench:api). Its columns never change, so the
      // writer's updates of services stay HOT.
      `create index services_org_id_name_id_idx on services (org_id, name, id)`,
    ]),
};

const alertRuleGenerations: Migration = {
  version: 11,
  name: 'alert_rule_generations',
  up: (sql) =>
    run(sql, [
      // The revision at which a rule's evaluation last started afresh (0: since its creation).
      // A change of what a rule evaluates (metric, condition, threshold, duration, scope) or of
      // `enabled` takes a new generation, resolves the rule's alerts and deletes its windows in
      // the same transaction; evaluators drop windows of an older generation, even when the
      // change was undone before their next poll, and never store or fire one.
      `alter table alert_rules add column generation bigint not null default 0`,
    ]),
};

const evaluatorWatermarks: Migration = {
  version: 12,
  name: 'evaluator_watermarks',
  up: (sql) =>
    run(sql, [
      // The newest generation any rule took, in commit order: a rule's generation now comes from
      // the sequence while this row is locked, so a snapshot that sees generation g also sees
      // every rule of a lower one. Evaluators use it to tell the rules a checkpoint was written
      // under from the rules that reached them later (see evaluator_watermarks).
      `create table alert_rule_epoch (
        singleton boolean primary key default true check (singleton),
        generation bigint not null
      )`,
      `insert into alert_rule_epoch (generation)
        select coalesce(max(generation), 0) from alert_rules`,
      // Per host, for each (metric, rule scope) the newest sample time its rules evaluated and
      // the epoch the writing evaluator knew: every rule of that group and of a generation up to
      // that epoch has evaluated up to that time, unless its own row in evaluator_states says
      // otherwise. Written with the windows, the alerts and the offsets, in one transaction.
      `create table evaluator_watermarks (
        org_id text not null,
        host text not null,
        marks jsonb not null,
        updated_at timestamptz not null default now(),
        primary key (org_id, host)
      ) with (fillfactor = 70)`,
    ]),
};

const alertHistoryRetention: Migration = {
  version: 13,
  name: 'alert_history_retention',
  up: (sql) =>
    run(sql, [
      // pruneAlertHistory finds what is past retention without reading the whole history.
      `create index alerts_resolved_at_idx on alerts (resolved_at) where status = 'resolved'`,
      `create index investigations_on_demand_completed_at_idx on investigations (completed_at)
        where alert_id is null and status in ('completed', 'failed')`,
    ]),
};

const deadLetters: Migration = {
  version: 14,
  name: 'dead_letters',
  up: (sql) =>
    run(sql, [
      // The embedded mode's dead letters (its bus lives in memory; Kafka keeps them in
      // <topic>.dlq). Key and value as bytes: what was set aside may be what text cannot hold.
      `create table dead_letters (
        id bigint generated always as identity primary key,
        created_at timestamptz not null default now(),
        topic text not null,
        partition int not null,
        source_offset bigint not null,
        key bytea,
        value bytea,
        headers jsonb not null,
        reason text not null
      )`,
    ]),
};

const clampHugeSampleValues: Migration = {
  version: 15,
  name: 'clamp_huge_sample_values',
  up: (sql) =>
    run(sql, [
      // Values are accepted within ±1e100 since this version (no aggregate of a series can
      // overflow then); larger ones stored before made avg() overflow and wedge the rollups
      // (TimescaleDB's continuous aggregates included). A chunk that cannot be updated
      // (compressed, on an old TimescaleDB) is reported, not a reason to stop the start.
      `do $$
       begin
         update samples set value = greatest(least(value, 1e100), -1e100)
         where value > 1e100 or value < -1e100;
       exception when others then
         raise warning 'samples beyond ±1e100 were not clamped: %', sqlerrm;
       end $$`,
    ]),
};

const seriesIds: Migration = {
  version: 16,
  name: 'series_ids',
  async up(sql, { engine }) {
    await run(sql, [
      // One row per (service, metric): samples and rollups carry its id instead of the two
      // texts, which halves their rows and their dedup index and costs the server half as much
      // per stored row (docs/benchmarks/compare.md, storage layouts). bigint, not int: alignment pads
      // an int to 8 bytes before the float8 value and the timestamptz in samples rows and
      // (series_id, time) index entries alike, so int would save nothing, and ids burnt by
      // concurrent inserts of the same new series can never run out.
      `create table series (
        id bigint generated always as identity primary key,
        service_id text not null,
        metric text not null,
        constraint series_service_id_metric_key unique (service_id, metric)
      )`,
      // Writers cache series ids per (service, series_generation, metric) and hold the rows of
      // the services they write locked (their upsert) until they commit. Deleting a series
      // moves its service's generation first, waiting for those writers: a writer either sees
      // the new generation (and looks the id up again) or committed before the delete.
      `alter table services add column series_generation bigint not null default 0`,
      `create function series_deleted() returns trigger language plpgsql as $$
       begin
         update services set series_generation = series_generation + 1
         where id = old.service_id;
         return old;
       end $$`,
      `create trigger series_deleted before delete on series
        for each row execute function series_deleted()`,
      `create function series_truncated() returns trigger language plpgsql as $$
       begin
         update services set series_generation = series_generation + 1;
         return null;
       end $$`,
      `create trigger series_truncated before truncate on series
        for each statement execute function series_truncated()`,
      // Every key stored anywhere, the rollups' too: their history outlives raw samples.
      `insert into series (service_id, metric)
        select service_id, metric from samples
        union select service_id, metric from samples_1m
        union select service_id, metric from samples_1h
        order by 1, 2`,
      // A deleted service takes its series along; its samples, unreachable from then on, go
      // with retention (no code of ours deletes a service today). NOT VALID: keys of
      // services deleted by hand before this version keep their series, and so their samples.
      `alter table series add constraint series_service_id_fkey
        foreign key (service_id) references services (id) on delete cascade not valid`,
    ]);
    await engine.keySamplesBySeries(sql);
  },
};

const alertingDepth: Migration = {
  version: 17,
  name: 'alerting_depth',
  up: (sql) =>
    run(sql, [
      // The rule options (docs/api.md#rule-options). The API validates
      // them (422 naming the field); the checks hold the bounds for anything else that writes.
      // flapping is `{ "window_minutes", "max_transitions" }` or null (off).
      `alter table alert_rules
        add column recovery_threshold double precision,
        add column keep_firing_for_minutes int not null default 0
          check (keep_firing_for_minutes between 0 and 1440),
        add column no_data_minutes int check (no_data_minutes between 1 and 1440),
        add column no_data_state text not null default 'alerting'
          check (no_data_state in ('alerting', 'ok', 'keep')),
        add column renotify_minutes int check (renotify_minutes between 1 and 10080),
        add column message_template text check (char_length(message_template) <= 2000),
        add column flapping jsonb check (flapping is null or jsonb_typeof(flapping) = 'object')`,
      // A no-data alert has no sample that fired it: value null. Acknowledgement only acts on
      // renotification; acknowledged_by is the API key's id.
      `alter table alerts
        add column reason text not null default 'threshold'
          check (reason in ('threshold', 'no_data')),
        alter column value drop not null,
        add column acknowledged_at timestamptz,
        add column acknowledged_by text,
        add column acknowledgement_comment text,
        add column flapping boolean not null default false`,
      // The acknowledged / silenced filters and the renotify scan read active alerts of an org.
      `create index alerts_org_id_active_acknowledged_idx on alerts (org_id, acknowledged_at)
        where status = 'active'`,
      // Silences act on notifications only. Whether one is in force at an instant is computed
      // from starts_at, ends_at and recurrence ({ rrule, duration_minutes, timezone }); deleting
      // one moves ends_at to now (starts_at too when it had not started), so it stays listed
      // as expired.
      `create table silences (
        id text primary key,
        org_id text not null references organizations (id) on delete cascade,
        matchers jsonb not null check (jsonb_typeof(matchers) = 'object'),
        starts_at timestamptz not null,
        ends_at timestamptz not null,
        comment text not null,
        recurrence jsonb check (recurrence is null or jsonb_typeof(recurrence) = 'object'),
        created_at timestamptz not null default now(),
        created_by text not null,
        check (ends_at >= starts_at)
      )`,
      `create index silences_org_id_id_idx on silences (org_id, id desc)`,
      `create index silences_org_id_ends_at_idx on silences (org_id, ends_at)`,
      // Notifications beyond fired/resolved: `renotified` (renotify_minutes), `unsilenced` (a
      // silence ended on a still-active alert), `settled` (a flapping alert became stable).
      // Those can happen more than once per alert: `sequence` numbers them (0 for fired and
      // resolved), so the unique key still makes replays harmless and the idempotency key
      // (alert_id:transition, then :sequence when above 0) stays one per message.
      // `suppressed`: a silence matched the alert when the message was due; it is not sent.
      `alter table notifications
        drop constraint notifications_transition_check,
        add constraint notifications_transition_check check (transition in
          ('fired', 'resolved', 'renotified', 'unsilenced', 'settled')),
        drop constraint notifications_status_check,
        add constraint notifications_status_check check (status in
          ('pending', 'delivered', 'failed', 'suppressed')),
        add column sequence int not null default 0 check (sequence >= 0),
        drop constraint notifications_alert_id_transition_channel_key,
        add constraint notifications_alert_id_transition_sequence_channel_key
          unique (alert_id, transition, sequence, channel)`,
    ]),
};

const noData: Migration = {
  version: 18,
  name: 'evaluator_no_data',
  up: (sql) =>
    run(sql, [
      // No data (docs/api.md#rule-options): when the evaluator last took a sample of a
      // metric of a host, by its own clock (wall-clock arrival, not sample time), for the metrics
      // some rule watches for silence; with the host's tags (rule scopes) and its partition, so
      // a sweep finds the silent hosts of a partition without samples to look at.
      `create table evaluator_last_seen (
        org_id text not null,
        host text not null,
        metric text not null,
        partition int not null,
        tags jsonb not null,
        seen_at timestamptz not null,
        primary key (org_id, host, metric)
      )`,
      // The sweep reads the rows silent since before some time (and their partitions).
      `create index evaluator_last_seen_seen_at_partition_idx
        on evaluator_last_seen (seen_at, partition)`,
      // A batch's samples resolve their hosts' active no-data alerts: few, found without a scan.
      `create index alerts_org_id_host_active_no_data_idx on alerts (org_id, host)
        where status = 'active' and reason = 'no_data'`,
      // The silence each (rule, host) was last acted on (its seen_at): one no-data action per
      // silence, whichever replica sweeps, and however often.
      `create table evaluator_no_data (
        org_id text not null,
        rule_id text not null,
        host text not null,
        silent_since timestamptz not null,
        primary key (org_id, rule_id, host)
      )`,
      // Raised by a sweep that changes a partition's windows (no_data_state ok resets one): a
      // batch evaluated against the windows before it no longer commits, and caches reload.
      `alter table consumer_offsets add column state_revision bigint not null default 0`,
    ]),
};

const realTimeRollups: Migration = {
  version: 19,
  name: 'real_time_rollups',
  up: (sql, { engine }) => engine.createRealTimeRollups(sql),
};

const compressedRollups: Migration = {
  version: 20,
  name: 'compressed_rollups',
  up: (sql, { engine }) => engine.compressRollups(sql),
};

const seriesLabelsAndStaleMarkers: Migration = {
  version: 21,
  name: 'series_labels_and_stale_markers',
  async up(sql, { engine }) {
    await run(sql, [
      // A series written through an agent protocol keeps the labels it was written with
      // (docs/api.md#labels-and-values-as-written): every label but `__name__`, so each label
      // set of a metric on a host is a series of its own (a classic histogram's `le`,
      // node_cpu_seconds_total's cpu and mode). NULL: the series' labels are its service's
      // tags (/ingest, and every series stored before this version).
      `alter table series add column labels jsonb
        check (labels is null or jsonb_typeof(labels) = 'object')`,
      // One series per (service, metric, labels), NULL labels included. The labels go in the
      // key as the md5 of their jsonb text (canonical: equal label sets, equal text), '' for
      // NULL: a btree entry holds at most about 2.7 kB, and 64 tags of 256 characters are more.
      `alter table series drop constraint series_service_id_metric_key`,
      `create unique index series_service_id_metric_labels_key
        on series (service_id, metric, (coalesce(md5(labels::text), '')))`,
    ]);
    // Prometheus staleness markers, `(series_id, time)`: NaN never goes into samples, whose
    // rollups (avg, min, max, sum) it would poison.
    await engine.createStaleMarkers(sql);
  },
};

const seriesLabelsAsWritten: Migration = {
  version: 22,
  name: 'series_labels_as_written',
  up: (sql) =>
    run(sql, [
      // A labelled series reads back with exactly its own labels from this version on, with no
      // `host` = service name added (docs/api.md#labels-and-values-as-written). Influx line
      // protocol and collectd wrote a `host` (tag, field) that was not kept among the labels:
      // it is added back, the service's name. Their series are those that carry none of the
      // labels a remote-write series (`host` or `instance`) or an OTLP one (the resource
      // attribute its host came from) always carries. A series that would then read as
      // another stored one of its service keeps its labels (the reader merges the two anyway).
      `update series s set labels = s.labels || jsonb_build_object('host', v.name)
        from services v
        where v.id = s.service_id and s.labels is not null
          and not jsonb_exists_any(s.labels,
            array['host', 'instance', 'host.name', 'service.instance.id', 'service.name'])
          and not exists (
            select 1 from series o
            where o.service_id = s.service_id and o.metric = s.metric
              and o.labels = s.labels || jsonb_build_object('host', v.name)
          )`,
    ]),
};

const unaggregatedSamples: Migration = {
  version: 23,
  name: 'unaggregated_samples',
  // The values an agent may send that the aggregates cannot take (NaN, ±Inf, beyond ±1e100),
  // stored apart so that samples_1m and samples_1h never see them: PromQL and remote read merge
  // them in, as they merge the staleness markers.
  up: (sql, { engine }) => engine.createUnaggregatedSamples(sql),
};

const scaledSampleValues: Migration = {
  version: 24,
  name: 'scaled_sample_values',
  async up(sql, { engine }) {
    await run(sql, [
      sampleValueFunction,
      // What a running service still moves into the new layout, in batches after the
      // migration (storage/timescale/stored-sample-move.ts), one row per step, for rows stored
      // before `before`: `samples` (the raw samples, newest chunk first: every old row at or
      // past `moved_from` moved, and of the chunk under way, [chunk_start, moved_from), the
      // series below `next_series_id`), `samples_1m` and `samples_1h` (an aggregate's
      // materialized rows, copied from the oldest chunk up to `done_until`).
      `create table storage_moves (
        step text primary key,
        before timestamptz not null,
        moved_from timestamptz,
        chunk_start timestamptz,
        next_series_id bigint,
        done_until timestamptz not null default '-infinity',
        finished_at timestamptz
      )`,
    ]);
    // A sample's value as a scaled integer where that is exact (storage/scaled-value.ts), and
    // on TimescaleDB its time as epoch milliseconds; readers read through functions.
    await engine.scaleSampleValues(sql);
  },
};

const minuteAggregateHeldWindow: Migration = {
  version: 25,
  name: 'samples_1m_materialized_3h_before_raw_retention',
  // Issue 39: samples_1m's materialized rows within the raw retention cost 1.14 bytes per raw
  // sample at steady state held 12 hours, 0.29 held 3 (docs/benchmarks/storage.md, "Storage"). Jobs
  // only: no stored row moves.
  up: (sql, { engine }) => engine.remakeMinuteAggregateJobs(sql),
};

const alertmanagerChannel: Migration = {
  version: 26,
  name: 'alertmanager_channel',
  up: (sql) =>
    run(sql, [
      // Channel type `alertmanager` (docs/api.md#prometheus-rules-and-alertmanager): a target of
      // its own, named by rules, and a channel of the outbox like the others.
      `alter table notification_channels
        drop constraint notification_channels_type_check,
        add constraint notification_channels_type_check
          check (type in ('slack', 'email', 'webhook', 'alertmanager'))`,
      `alter table alert_rules
        drop constraint alert_rules_channels_check,
        add constraint alert_rules_channels_check
          check (channels <@ array['slack', 'email', 'webhook', 'alertmanager'])`,
      `alter table notifications
        drop constraint notifications_channel_check,
        add constraint notifications_channel_check
          check (channel in ('slack', 'email', 'webhook', 'alertmanager'))`,
    ]),
};

const prometheusRuleGroups: Migration = {
  version: 27,
  name: 'prometheus_rule_groups',
  up: (sql) =>
    run(sql, [
      // Prometheus rule groups loaded through the ruler API or `monitor rules load`, kept as the
      // YAML that was posted so that the API answers it back unchanged; rule_count is the
      // group's number of rules, for RULES_MAX_PER_ORG. Plain rows on either storage engine.
      `create table prometheus_rule_groups (
        org_id text not null references organizations (id) on delete cascade,
        namespace text not null check (namespace <> ''),
        name text not null check (name <> ''),
        definition text not null,
        rule_count integer not null check (rule_count >= 0),
        updated_at timestamptz not null default now(),
        primary key (org_id, namespace, name)
      )`,
    ]),
};

const prometheusRuleGroupStates: Migration = {
  version: 28,
  name: 'prometheus_rule_group_states',
  up: (sql) =>
    run(sql, [
      // What the evaluator that owns a rule group keeps between its evaluations: the rule
      // manager's state (pending and firing alerts, series written last time) as
      // `evaluateRuleGroup` returns it, when the group was last evaluated (its aligned slot, ms
      // since the epoch: a new owner goes on from there, and a write from an owner that lost the
      // group is refused by comparing it), how long that took, and each rule's health.
      // Deleting the group deletes its state.
      `create table prometheus_rule_group_states (
        org_id text not null,
        namespace text not null,
        name text not null,
        state jsonb not null check (jsonb_typeof(state) = 'object'),
        last_evaluation_ms bigint not null,
        evaluation_duration_ms double precision not null,
        rule_health jsonb not null check (jsonb_typeof(rule_health) = 'array'),
        updated_at timestamptz not null default now(),
        primary key (org_id, namespace, name),
        foreign key (org_id, namespace, name)
          references prometheus_rule_groups (org_id, namespace, name) on delete cascade
      )`,
    ]),
};

const prometheusRuleAlerts: Migration = {
  version: 29,
  name: 'prometheus_rule_alerts',
  up: (sql) =>
    run(sql, [
      // Every change of a rule group takes a new revision: an evaluation saves its state and
      // alerts only if the group is still at the revision it evaluated (a group deleted and
      // posted again included), so a change never meets a late write of the old definition.
      `create sequence prometheus_rule_group_revisions`,
      `alter table prometheus_rule_groups
        add column revision bigint not null default nextval('prometheus_rule_group_revisions')`,
      // The ids (`rul_…`) of alerting rules of rule files: one per rule of a group, by its state
      // key (name and labels, as Prometheus carries a rule's state across a reload), created
      // when the rule first has an alert; a rule removed from its group loses its id.
      `create table prometheus_rules (
        id text primary key,
        org_id text not null,
        namespace text not null,
        group_name text not null,
        rule_key text not null,
        created_at timestamptz not null default now(),
        unique (org_id, namespace, group_name, rule_key),
        foreign key (org_id, namespace, group_name)
          references prometheus_rule_groups (org_id, namespace, name) on delete cascade
      )`,
      // Alerts of rule files (docs/api.md#prometheus-rules-and-alertmanager): no condition or
      // threshold, their labels (which identify them) and annotations; valid_until is
      // Prometheus' ValidUntil (Alertmanager takes a firing alert for resolved after it);
      // resend_due_at is set by an evaluation that re-sends the alert to Alertmanagers, as
      // Prometheus' notifier does, and cleared by the notifier that posts it.
      `alter table alerts
        alter column condition drop not null,
        alter column threshold drop not null,
        add column labels jsonb not null default '{}' check (jsonb_typeof(labels) = 'object'),
        add column annotations jsonb not null default '{}'
          check (jsonb_typeof(annotations) = 'object'),
        add column valid_until timestamptz,
        add column resend_due_at timestamptz`,
      // One active alert per (rule, service) for our own rules (labels '{}'); per (rule, label
      // set) for a rule file's, which may fire several alerts on one host.
      `create unique index alerts_rule_id_service_id_labels_active_key
        on alerts (rule_id, service_id, md5(labels::text)) where status = 'active'`,
      `drop index alerts_rule_id_service_id_active_key`,
      // An evaluation reads its rules' active and recently resolved alerts.
      `create index alerts_rule_id_resolved_at_idx on alerts (rule_id, resolved_at)
        where condition is null`,
      `create index alerts_resend_due_at_idx on alerts (resend_due_at)
        where resend_due_at is not null`,
    ]),
};

const scaledSampleReads: Migration = {
  version: 30,
  name: 'raw_scaled_samples',
  // Issue 39: PromQL reads decode scaled values in the api rather than with sample_value in
  // SQL, a fifth less of the server's time for a read of many series (docs/benchmarks/promql.md,
  // "PromQL"). A function only: nothing stored changes.
  up: (sql, { engine }) => engine.createScaledSampleReads(sql),
};

const sampleTimesByRange: Migration = {
  version: 31,
  name: 'samples_time_brin',
  // Issue 39, item 5: one btree insertion less per stored sample; see indexSampleTimesByRange.
  up: (sql, { engine }) => engine.indexSampleTimesByRange(sql),
};

const sampleNewestBounds: Migration = {
  version: 32,
  name: 'sample_newest_bounds',
  // Issue 56: the writer, not a unique index, keeps a (series, time) to its first value
  // (samples/sample-dedup.ts). A point later than everything its series stored goes in without
  // a look; what that "everything" is, for a series the writer has not seen since it started,
  // is bounded by these: each partition's newest sample time, raised with its offsets, and for
  // writes without offsets (benchmarks, tests) one row of their own, which also starts from
  // what was stored before this version.
  async up(sql, { engine }) {
    await run(sql, [
      `alter table consumer_offsets add column newest_time_ms bigint`,
      `create table sample_newest_bounds (
        singleton boolean primary key default true check (singleton),
        newest_time_ms bigint
      )`,
    ]);
    const newest = await newestSampleTimeMs(sql, engine.mode);
    await sql`insert into sample_newest_bounds (newest_time_ms) values (${newest})`;
  },
};

const unindexedHead: Migration = {
  version: 33,
  name: 'unindexed_sample_head',
  // Issue 56: no per-row index on the chunk being written; short chunks compressed soon after
  // they end instead (storage/timescale/head-chunks.ts).
  up: (sql, { engine }) => engine.keepHeadUnindexed(sql),
};

const lateSampleWrites: Migration = {
  version: 34,
  name: 'late_sample_writes',
  // Issue 57: each write of samples that were already old when written, by organization and
  // hour, with its transaction: the query cache drops what such a write changed
  // (samples/late-sample-writes.ts). Only inserted and pruned, never updated.
  up: (sql) =>
    run(sql, [
      `create table late_sample_writes (
        org_id text not null,
        hour_ms bigint not null,
        written_xid xid8 not null default pg_current_xact_id(),
        written_at timestamptz not null default now()
      )`,
      `create index late_sample_writes_by_org_hour on late_sample_writes (org_id, hour_ms)`,
      `create index late_sample_writes_by_written_at on late_sample_writes (written_at)`,
    ]),
};

const keptSampleTiers: Migration = {
  version: 35,
  name: 'kept_sample_tiers',
  // Issue 57: the 5-minute and hourly tiers PromQL reads beyond the raw retention, stored by
  // the writer's maintenance before the raw samples go (storage/kept-tiers.ts).
  up: (sql, { engine }) => engine.createKeptTiers(sql),
};

const retiredMinuteRollup: Migration = {
  version: 36,
  name: 'retired_minute_rollup',
  // Issue 57: samples_1m is no longer refreshed; its rows stay until their retention, the
  // 5-minute tier answers beyond the raw samples (storage/retired-rollups.ts).
  up: (sql, { engine }) => engine.retireRollup(sql, 'samples_1m'),
};

const retiredHourRollup: Migration = {
  version: 37,
  name: 'retired_hour_rollup',
  // Issues 56 and 57: samples_1h the same; within the raw retention its hours are computed from
  // the raw samples as they are read, beyond it the hourly tier answers.
  up: (sql, { engine }) => engine.retireRollup(sql, 'samples_1h'),
};

const exemplars: Migration = {
  version: 38,
  name: 'exemplars',
  // Issue 58: the exemplars of remote-write and OTLP, by series and time, for query_exemplars.
  up: (sql, { engine }) => engine.createExemplars(sql),
};

const nativeHistograms: Migration = {
  version: 39,
  name: 'native_histograms',
  // Issue 58: native histograms as sent, then in chunks of our compressed layout.
  up: (sql, { engine }) => engine.createHistogramTables(sql),
};

const samplePartitionShards: Migration = {
  version: 40,
  name: 'sample_partition_shards',
  up: (sql) =>
    run(sql, [
      // Issue 59: which sample shard holds each partition of the samples topic, kept in the
      // control database (every shard gets the table too, unused there). A partition without a
      // row belongs to the first shard of SAMPLE_SHARDS; rows change only by `monitor shards`.
      `create table sample_partition_shards (
        topic text not null,
        partition int not null check (partition >= 0),
        shard text not null,
        primary key (topic, partition)
      )`,
    ]),
};

const serviceShardCopies: Migration = {
  version: 41,
  name: 'service_shard_copies',
  up: (sql) =>
    run(sql, [
      // Issue 59: the control database keeps a copy of each alerted service of another shard
      // (same id, name and tags), which alerts, silences and notifications read. A shard's own
      // services list and detail skip such copies when the control database is a shard too.
      `alter table services add column shard_copy boolean not null default false`,
    ]),
};

const samplePartitionMoves: Migration = {
  version: 42,
  name: 'sample_partition_moves',
  up: (sql) =>
    run(sql, [
      // Issue 59: a partition moving to another shard with its samples (`monitor shards move`),
      // kept in the control database. The command publishes a marker record naming the move
      // into the partition; the writer and the evaluator stop at it (`reached`) until the move
      // is done (they then go on to the new shard) or abandoned (they go on where they were).
      `create table sample_partition_moves (
        id bigint generated always as identity primary key,
        topic text not null,
        partition int not null check (partition >= 0),
        from_shard text not null,
        to_shard text not null,
        state text not null check (state in ('waiting', 'done', 'abandoned')),
        marker_offset bigint,
        writer_reached_at timestamptz,
        evaluator_reached_at timestamptz,
        started_at timestamptz not null default now(),
        finished_at timestamptz
      )`,
      `create unique index sample_partition_moves_one_waiting on sample_partition_moves
        (topic, partition) where state = 'waiting'`,
      // On the shard a partition left: its writer offsets row says where it went, and a writer
      // that still routes the partition there (an old map) is refused, so it reads the map again.
      `alter table consumer_offsets add column moved_to text`,
    ]),
};

/** Every migration, in version order. */
export const migrations: readonly Migration[] = [
  organizationsAndApiKeys,
  services,
  samplesAndSnapshots,
  rollups,
  consumerOffsets,
  alerts,
  alertRulesAndNotifications,
  investigations,
  investigationEvidencePositions,
  servicesPageIndex,
  alertRuleGenerations,
  evaluatorWatermarks,
  alertHistoryRetention,
  deadLetters,
  clampHugeSampleValues,
  seriesIds,
  alertingDepth,
  noData,
  realTimeRollups,
  compressedRollups,
  seriesLabelsAndStaleMarkers,
  seriesLabelsAsWritten,
  unaggregatedSamples,
  scaledSampleValues,
  minuteAggregateHeldWindow,
  alertmanagerChannel,
  prometheusRuleGroups,
  prometheusRuleGroupStates,
  prometheusRuleAlerts,
  scaledSampleReads,
  sampleTimesByRange,
  sampleNewestBounds,
  unindexedHead,
  lateSampleWrites,
  keptSampleTiers,
  retiredMinuteRollup,
  retiredHourRollup,
  exemplars,
  nativeHistograms,
  samplePartitionShards,
  serviceShardCopies,
  samplePartitionMoves,
];
