// A run's metrics: one summary per metric, and charts of the pinned ones
// (pins kept in the URL, at most four drawn) with attempt boundaries,
// non-finite points marked, and a table of the numbers beside each chart.
import { api, ok } from '../api/client';
import { useFetch } from '../lib/data';
import { lttb } from '../lib/lttb';
import { loc, setQuery } from '../router';
import { ProblemView, Loading, Section, fmtNum } from '../ui/common';
import { lazy } from '../ui/lazy';
import type { ChartProps } from '../charts/Chart';
import type { RunDetail, MetricPoint } from '../api/types';

const Chart = lazy<ChartProps>(() => import('../charts/Chart').then((m) => m.Chart), 'the chart');

const MAX_PINS = 4;
const MAX_POINTS = 100_000;
const SHOWN = 1600;

export async function loadPoints(runId: string, name: string, signal: AbortSignal): Promise<MetricPoint[]> {
  const out: MetricPoint[] = [];
  let cursor: string | undefined;
  while (out.length < MAX_POINTS) {
    const page = await ok(api.GET('/v1/runs/{id}/metrics', { params: { path: { id: runId }, query: { name, limit: 5000, ...(cursor ? { cursor } : {}) } }, signal }));
    if (!('name' in page) || !('next_cursor' in page)) break;
    out.push(...page.items);
    if (!page.next_cursor) break;
    cursor = page.next_cursor;
  }
  return out;
}

export interface Prepared {
  xs: number[];
  ys: number[];
  total: number;
  nonFinite: { x: number; raw: string }[];
  marks: { x: number; label: string }[];
}

/** Points to chart: x is the step (else the point's order), downsampled with LTTB; non-finite points and attempt starts kept apart. */
export function prepare(points: MetricPoint[]): Prepared {
  const xs: number[] = [];
  const ys: number[] = [];
  const nonFinite: { x: number; raw: string }[] = [];
  const marks: { x: number; label: string }[] = [];
  let lastAttempt = -1;
  points.forEach((p, i) => {
    const x = p.step ?? i;
    if (p.attempt !== lastAttempt) {
      if (lastAttempt !== -1) marks.push({ x, label: `attempt ${p.attempt}` });
      lastAttempt = p.attempt;
    }
    if (p.value === null) nonFinite.push({ x, raw: p.raw ?? 'non-finite' });
    else {
      xs.push(x);
      ys.push(p.value);
    }
  });
  const [dx, dy] = lttb(xs, ys, SHOWN);
  return { xs: dx, ys: dy, total: points.length, nonFinite, marks };
}

function PinnedChart({ run, name }: { run: RunDetail; name: string }) {
  const pts = useFetch((signal) => loadPoints(run.id, name, signal), [run.id, name, run.state]);
  if (pts.error) return <ProblemView error={pts.error} />;
  if (!pts.data) return <Loading what={`${name} points`} />;
  const p = prepare(pts.data);
  return (
    <Section title={name} actions={<button type="button" class="small" onClick={() => unpin(name)}>Unpin {name}</button>}>
      <Chart title={name} xLabel="step" series={[{ label: name, xs: p.xs, ys: p.ys }]} marks={p.marks} nonFinite={p.nonFinite.map((n) => n.x)} />
      <p class="muted small">
        {p.xs.length.toLocaleString()} of {p.total.toLocaleString()} points shown{p.xs.length < p.total - p.nonFinite.length ? ' (sampled; the extremes and shape are kept)' : ''}
        {p.nonFinite.length ? ` · ${p.nonFinite.length} non-finite (${[...new Set(p.nonFinite.map((n) => n.raw))].join(', ')}), marked in red` : ''}
        {p.marks.length ? ` · dashed lines mark attempt starts` : ''}
      </p>
      <details>
        <summary>The numbers</summary>
        <div class="table-wrap short">
          <table class="data">
            <thead>
              <tr>
                <th scope="col">Step</th>
                <th scope="col">Value</th>
              </tr>
            </thead>
            <tbody>
              {p.xs.slice(0, 500).map((x, i) => (
                <tr key={i}>
                  <td>{x}</td>
                  <td>{p.ys[i]}</td>
                </tr>
              ))}
              {p.nonFinite.map((n) => (
                <tr key={`nf${n.x}`}>
                  <td>{n.x}</td>
                  <td>{n.raw}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </Section>
  );
}

function pins(): string[] {
  return (loc.value.query.get('m') ?? '').split(',').filter(Boolean);
}
function pin(name: string) {
  const p = pins().filter((n) => n !== name);
  setQuery({ m: [...p, name].slice(-MAX_PINS).join(',') });
}
function unpin(name: string) {
  setQuery({ m: pins().filter((n) => n !== name).join(',') || null });
}

export function RunMetrics({ run }: { run: RunDetail }) {
  const s = useFetch((signal) => ok(api.GET('/v1/runs/{id}/metrics', { params: { path: { id: run.id } }, signal })), [run.id, run.state], { pollMs: run.state === 'Running' ? 10000 : undefined });
  if (s.error) return <ProblemView error={s.error} />;
  if (!s.data) return <Loading what="metrics" />;
  const items = 'items' in s.data && !('name' in s.data) ? s.data.items : [];
  if (!items.length) return <p class="muted">The workload reported no metric (see docs/workload-markers.md for how a workload reports them).</p>;
  const pinned = pins();
  return (
    <>
      <div class="table-wrap">
        <table class="data">
          <thead>
            <tr>
              <th scope="col">Metric</th>
              <th scope="col">Points</th>
              <th scope="col">Non-finite</th>
              <th scope="col">Min (step)</th>
              <th scope="col">Max (step)</th>
              <th scope="col">Latest</th>
              <th scope="col">
                <span class="sr-only">Chart</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {items.map((m) => (
              <tr key={m.name}>
                <th scope="row">{m.name}</th>
                <td>{m.count}</td>
                <td>{m.non_finite}</td>
                <td>
                  {m.min === null ? '—' : fmtNum(m.min)} {m.min_step !== null ? <span class="muted">({m.min_step})</span> : null}
                </td>
                <td>
                  {m.max === null ? '—' : fmtNum(m.max)} {m.max_step !== null ? <span class="muted">({m.max_step})</span> : null}
                </td>
                <td>{m.latest.value ?? m.latest.raw ?? '—'}</td>
                <td>
                  {pinned.includes(m.name) ? (
                    <button type="button" class="small" onClick={() => unpin(m.name)} aria-pressed="true">
                      Charted
                    </button>
                  ) : (
                    <button type="button" class="small" onClick={() => pin(m.name)} aria-pressed="false" aria-label={`Chart ${m.name}`}>
                      Chart
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {pinned.map((n) => (
        <PinnedChart key={n} run={run} name={n} />
      ))}
    </>
  );
}
