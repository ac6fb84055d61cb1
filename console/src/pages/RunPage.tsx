// A run: header with actions, and tabs kept in the URL (overview with the
// attempt timeline and why it waits, logs, metrics, checkpoints, spec,
// evidence verified in the browser, events with the hash-chain check, and
// the equivalent commands).
import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { ApiError } from '../api/problem';
import { useFetch } from '../lib/data';
import { href, navigate } from '../router';
import { ProblemView, StateBadge, Time, TabLinks, isTerminal, Loading, Section, CopyButton } from '../ui/common';
import { Dialog } from '../ui/dialog';
import { lazy } from '../ui/lazy';
import { formatDuration } from '../state/prefs';
import { LogViewer } from './LogViewer';
import type { RunDetail, RunAttempt } from '../api/types';

const Metrics = lazy(() => import('./RunMetrics').then((m) => m.RunMetrics), 'metrics');
const EvidenceTab = lazy(() => import('./RunEvidence').then((m) => m.EvidenceTab), 'evidence');
const EventsTab = lazy(() => import('./RunEvidence').then((m) => m.EventsTab), 'events');
const SpecTab = lazy(() => import('./RunEvidence').then((m) => m.SpecTab), 'the spec');

const TABS = [
  { id: 'overview', label: 'Overview' },
  { id: 'logs', label: 'Logs' },
  { id: 'metrics', label: 'Metrics' },
  { id: 'checkpoints', label: 'Checkpoints' },
  { id: 'spec', label: 'Spec' },
  { id: 'evidence', label: 'Evidence' },
  { id: 'events', label: 'Events' },
  { id: 'commands', label: 'Commands' },
];

const LIVE_MS = 1000;

export function useRun(id: string) {
  return useFetch((signal) => ok(api.GET('/v1/runs/{id}', { params: { path: { id } }, signal })), [id], { pollMs: LIVE_MS });
}

function span(a: RunAttempt): string {
  if (!a.started_at) return '—';
  return formatDuration((a.finished_at ? Date.parse(a.finished_at) : Date.now()) - Date.parse(a.started_at));
}

/** One lane per attempt: waiting (created → started), then running (started → finished), on a shared time axis. */
function Timeline({ run }: { run: RunDetail }) {
  const attempts = run.attempts ?? [];
  if (!attempts.length) return <p class="muted">No attempt has been recorded yet.</p>;
  const t0 = Date.parse(run.created_at);
  const tEnd = Math.max(Date.now(), ...attempts.map((a) => Date.parse(a.finished_at ?? a.started_at ?? a.created_at)));
  const pct = (t: number) => `${(((t - t0) / Math.max(1, tEnd - t0)) * 100).toFixed(2)}%`;
  return (
    <ol class="timeline" aria-label="Attempts">
      {attempts.map((a) => {
        const c = Date.parse(a.created_at);
        const s = a.started_at ? Date.parse(a.started_at) : null;
        const f = a.finished_at ? Date.parse(a.finished_at) : null;
        return (
          <li key={a.attempt}>
            <div class="lane-label">
              <strong>Attempt {a.attempt}</strong> <StateBadge state={a.state} /> {a.retry_reason ? <span class="chip">retry: {a.retry_reason}</span> : null}
              {a.reason ? <span class="muted small"> {a.reason}</span> : null}
            </div>
            <div class="lane" aria-hidden="true">
              <span class="seg wait" style={{ left: pct(c), width: `calc(${pct(s ?? f ?? tEnd)} - ${pct(c)})` }} />
              {s ? <span class="seg run" style={{ left: pct(s), width: `calc(${pct(f ?? tEnd)} - ${pct(s)})` }} /> : null}
            </div>
            <p class="small muted">
              created <Time at={a.created_at} /> · started <Time at={a.started_at} /> · finished <Time at={a.finished_at} /> · ran {span(a)}
              {a.exit_code !== null ? ` · exit code ${a.exit_code}` : ''}
              {a.node_names.length ? ` · nodes ${a.node_names.join(', ')}` : ''}
            </p>
          </li>
        );
      })}
    </ol>
  );
}

/** Why the run waits: Kueue's message, its place in the queue, and what the queue has left. */
function Waiting({ run }: { run: RunDetail }) {
  const qv = useFetch((signal) => ok(api.GET('/v1/workspaces/{ws}/queue', { params: { path: { ws: run.workspace } }, signal })), [run.workspace, run.state], { pollMs: 5000 });
  const item = qv.data?.items.find((i) => i.run_id === run.id);
  return (
    <Section title="Why it is waiting">
      {run.queue?.position ? (
        <p>
          Position <strong>{run.queue.position}</strong>
          {run.queue.pending ? <> of {run.queue.pending}</> : null} in its queue.
        </p>
      ) : null}
      {run.queue?.message ? <p>Kueue: {run.queue.message}</p> : null}
      {item ? (
        <>
          <p>{item.why}</p>
          <dl class="facts">
            <dt>LocalQueue</dt>
            <dd>{item.local_queue ?? '—'}</dd>
            <dt>ClusterQueue</dt>
            <dd>{item.cluster_queue ?? '—'}</dd>
            <dt>Fits free quota now</dt>
            <dd>{item.fits === null || item.fits === undefined ? 'unknown' : item.fits ? 'yes' : 'no'}</dd>
            {item.requests ? (
              <>
                <dt>Asks for</dt>
                <dd>
                  {Object.entries(item.requests)
                    .map(([k, v]) => `${k} ${v}`)
                    .join(', ')}
                </dd>
              </>
            ) : null}
          </dl>
        </>
      ) : qv.error ? (
        <ProblemView error={qv.error} />
      ) : null}
      <p>
        <a href={href(`/w/${run.workspace}/quota`, { request: '1' })}>Request more quota</a>
      </p>
    </Section>
  );
}

function Overview({ run }: { run: RunDetail }) {
  const waiting = run.state === 'Accepted' || run.state === 'Queued' || run.state === 'Recovering';
  return (
    <>
      {waiting ? <Waiting run={run} /> : null}
      <Section title="Attempts">
        <Timeline run={run} />
      </Section>
      <Section title="Details">
        <dl class="facts">
          <dt>Run id</dt>
          <dd>
            <code>{run.id}</code>
          </dd>
          <dt>Owner</dt>
          <dd>{run.owner}</dd>
          <dt>Engine</dt>
          <dd>{run.engine}</dd>
          <dt>Created</dt>
          <dd>
            <Time at={run.created_at} />
          </dd>
          <dt>Started</dt>
          <dd>
            <Time at={run.started_at} />
          </dd>
          <dt>Finished</dt>
          <dd>
            <Time at={run.finished_at} />
          </dd>
          <dt>Config hash</dt>
          <dd>
            <code class="wrap">{run.config_hash}</code>
          </dd>
        </dl>
      </Section>
    </>
  );
}

function Checkpoints({ run, onResume }: { run: RunDetail; onResume(): void }) {
  const c = useFetch((signal) => ok(api.GET('/v1/runs/{id}/checkpoints', { params: { path: { id: run.id } }, signal })), [run.id]);
  if (c.error) return <ProblemView error={c.error} />;
  if (!c.data) return <Loading what="checkpoints" />;
  if (!c.data.items.length) return <p class="muted">The workload reported no checkpoint.</p>;
  return (
    <>
      <p>
        A resume starts from <code>{c.data.latest?.path ?? 'the start'}</code>.{' '}
        {isTerminal(run.state) && run.state !== 'Succeeded' ? (
          <button type="button" onClick={onResume}>
            Resume from there
          </button>
        ) : null}
      </p>
      {c.data.items.map((g) => (
        <Section key={g.attempt} title={`Attempt ${g.attempt}`}>
          <table class="data">
            <thead>
              <tr>
                <th scope="col">Path</th>
                <th scope="col">Step</th>
                <th scope="col">At</th>
              </tr>
            </thead>
            <tbody>
              {g.items.map((k) => (
                <tr key={k.path + k.at}>
                  <td>
                    <code>{k.path}</code>
                  </td>
                  <td>{k.step ?? '—'}</td>
                  <td>
                    <Time at={k.at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </Section>
      ))}
    </>
  );
}

function Commands({ run }: { run: RunDetail }) {
  const origin = location.origin;
  const cmds = [
    ['Show the run', `curl -s -H "Authorization: Bearer $TOKEN" ${origin}/v1/runs/${run.id}`, `tau status ${run.id}`],
    ['Follow its logs', `curl -sN -H "Authorization: Bearer $TOKEN" -H 'Accept: text/event-stream' '${origin}/v1/runs/${run.id}/logs?follow=true'`, `tau logs -f ${run.id}`],
    ['Its events', `curl -s -H "Authorization: Bearer $TOKEN" ${origin}/v1/runs/${run.id}/events`, `tau events ${run.id}`],
    ['Cancel it', `curl -s -X POST -H "Authorization: Bearer $TOKEN" ${origin}/v1/runs/${run.id}:cancel`, `tau cancel ${run.id}`],
    ['Fetch and verify its evidence', `curl -s -H "Authorization: Bearer $TOKEN" ${origin}/v1/runs/${run.id}/evidence`, `tau evidence --verify ${run.id}`],
  ];
  return (
    <table class="data commands">
      <thead>
        <tr>
          <th scope="col">What</th>
          <th scope="col">curl</th>
          <th scope="col">tau</th>
        </tr>
      </thead>
      <tbody>
        {cmds.map(([what, curl, tau]) => (
          <tr key={what}>
            <th scope="row">{what}</th>
            <td>
              <code class="wrap">{curl}</code> <CopyButton text={curl!} label={`Copy curl: ${what}`} />
            </td>
            <td>
              <code>{tau}</code> <CopyButton text={tau!} label={`Copy tau: ${what}`} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The few facts of a run, for the runs list's drawer. */
export function RunSummary({ id }: { id: string }) {
  const r = useRun(id);
  if (r.error) return <ProblemView error={r.error} />;
  if (!r.data) return <Loading what="the run" />;
  const run = r.data;
  return (
    <>
      <p>
        <StateBadge state={run.state} /> {run.reason ?? ''} {run.message ? <span class="muted">— {run.message}</span> : null}
      </p>
      <dl class="facts">
        <dt>Owner</dt>
        <dd>{run.owner}</dd>
        <dt>Engine</dt>
        <dd>{run.engine}</dd>
        <dt>Attempt</dt>
        <dd>{run.attempt}</dd>
        <dt>Created</dt>
        <dd>
          <Time at={run.created_at} />
        </dd>
        {run.queue?.position ? (
          <>
            <dt>Queue position</dt>
            <dd>
              {run.queue.position}
              {run.queue.pending ? ` of ${run.queue.pending}` : ''}
            </dd>
          </>
        ) : null}
      </dl>
      <Timeline run={run} />
    </>
  );
}

export function RunPage({ id, tab }: { id: string; tab: string }) {
  const r = useRun(id);
  const [confirm, setConfirm] = useState<'cancel' | 'resume' | null>(null);
  const [actionErr, setActionErr] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  if (r.error && !r.data) return <ProblemView error={r.error} />;
  if (!r.data) return <Loading what="the run" />;
  const run = r.data;
  const act = async () => {
    setBusy(true);
    setActionErr(undefined);
    try {
      if (confirm === 'cancel') await ok(api.POST('/v1/runs/{id}:cancel', { params: { path: { id } } }));
      else {
        const res = await ok(api.POST('/v1/runs/{id}:resume', { params: { path: { id } }, body: { force: false } }));
        if (res && typeof res === 'object' && 'id' in res && res.id !== id) navigate(href(`/runs/${String(res.id)}`));
      }
      setConfirm(null);
      r.reload();
    } catch (e) {
      if (e instanceof ApiError) setActionErr(e);
    } finally {
      setBusy(false);
    }
  };
  const current = TABS.some((t) => t.id === tab) ? tab : 'overview';
  return (
    <div class="page">
      <div class="page-head">
        <div>
          <p class="crumbs">
            <a href={href(`/w/${run.workspace}/runs`)}>{run.workspace} runs</a> /
          </p>
          <h1>{run.name}</h1>
          <p class="run-state" aria-live="polite">
            <StateBadge state={run.state} /> {run.reason ? <span>{run.reason}</span> : null} {run.message ? <span class="muted">— {run.message}</span> : null} <span class="muted small">attempt {run.attempt}</span>
          </p>
        </div>
        <div class="actions">
          {!isTerminal(run.state) ? (
            <button type="button" class="danger" onClick={() => setConfirm('cancel')}>
              Cancel run
            </button>
          ) : run.state !== 'Succeeded' ? (
            <button type="button" onClick={() => setConfirm('resume')}>
              Resume
            </button>
          ) : null}
          <a class="button" href={href(`/w/${run.workspace}/submit`, { clone: run.id })}>
            Clone and edit
          </a>
          <CopyButton text={location.href} label="Copy link" />
        </div>
      </div>
      <ProblemView error={r.error} />
      <TabLinks tabs={TABS} current={current} base={`/runs/${id}`} label="Run views" />
      <div class="tab-body">
        {current === 'overview' ? <Overview run={run} /> : null}
        {current === 'logs' ? <LogViewer run={run} /> : null}
        {current === 'metrics' ? <Metrics run={run} /> : null}
        {current === 'checkpoints' ? <Checkpoints run={run} onResume={() => setConfirm('resume')} /> : null}
        {current === 'spec' ? <SpecTab run={run} /> : null}
        {current === 'evidence' ? <EvidenceTab run={run} /> : null}
        {current === 'events' ? <EventsTab run={run} /> : null}
        {current === 'commands' ? <Commands run={run} /> : null}
      </div>
      <Dialog
        open={confirm !== null}
        title={confirm === 'cancel' ? `Cancel ${run.name}?` : `Resume ${run.name}?`}
        onClose={() => setConfirm(null)}
        actions={
          <>
            <button type="button" onClick={() => setConfirm(null)} disabled={busy}>
              {confirm === 'cancel' ? 'Keep running' : 'Not now'}
            </button>
            <button type="button" class={confirm === 'cancel' ? 'danger' : 'primary'} onClick={act} disabled={busy}>
              {confirm === 'cancel' ? 'Cancel run' : 'Resume run'}
            </button>
          </>
        }
      >
        <p>{confirm === 'cancel' ? 'The run stops; its logs, metrics and evidence are kept.' : 'A new attempt starts from the latest checkpoint the run reported.'}</p>
        <ProblemView error={actionErr} />
      </Dialog>
    </div>
  );
}
