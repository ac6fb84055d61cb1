// Compare 2–10 runs: the resolved configs side by side (only the fields
// that differ, unless asked), metric summaries, and overlaid charts.
import { useState } from 'preact/hooks';
import { api, ok, rawFetch } from '../api/client';
import { ApiError } from '../api/problem';
import { useFetch } from '../lib/data';
import { loc, href, setQuery } from '../router';
import { ProblemView, Loading, Section, StateBadge, fmtNum } from '../ui/common';
import { lazy } from '../ui/lazy';
import { loadPoints, prepare } from './RunMetrics';
import type { ChartProps } from '../charts/Chart';
import type { RunDetail, MetricSummary } from '../api/types';

const Chart = lazy<ChartProps>(() => import('../charts/Chart').then((m) => m.Chart), 'the chart');

interface Loaded {
  run: RunDetail;
  /** The resolved config, flattened to dotted paths; null until the run ends. */
  config: Record<string, string> | null;
  metrics: MetricSummary[];
}

function flatten(v: unknown, prefix: string, out: Record<string, string>): void {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) flatten(x, prefix ? `${prefix}.${k}` : k, out);
  } else out[prefix] = JSON.stringify(v);
}

async function loadOne(id: string, signal: AbortSignal): Promise<Loaded> {
  const run = await ok(api.GET('/v1/runs/{id}', { params: { path: { id } }, signal }));
  // The resolved config comes with the evidence record, which a run that
  // has not ended does not have yet (409).
  let config: Record<string, string> | null = {};
  try {
    const ev = (await (await rawFetch(`/v1/runs/${id}/evidence`, { signal })).json()) as { record?: { config?: { resolved?: unknown } } };
    flatten(ev.record?.config?.resolved ?? {}, '', config);
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 409) throw e;
    config = null;
  }
  const m = await ok(api.GET('/v1/runs/{id}/metrics', { params: { path: { id } }, signal }));
  return { run, config, metrics: 'items' in m && !('name' in m) ? m.items : [] };
}

function Overlay({ runs, name }: { runs: Loaded[]; name: string }) {
  const pts = useFetch((signal) => Promise.all(runs.map((r) => loadPoints(r.run.id, name, signal))), [name, runs.map((r) => r.run.id).join()]);
  if (pts.error) return <ProblemView error={pts.error} />;
  if (!pts.data) return <Loading what={`${name} points`} />;
  const series = pts.data.map((p, i) => {
    const d = prepare(p);
    return { label: runs[i]!.run.name + ' ' + runs[i]!.run.id.slice(0, 8), xs: d.xs, ys: d.ys };
  });
  return <Chart title={name} xLabel="step" series={series} />;
}

export function Compare({ ws }: { ws: string }) {
  const ids = (loc.value.query.get('runs') ?? '').split(',').filter(Boolean).slice(0, 10);
  const [all, setAll] = useState(false);
  const data = useFetch((signal) => Promise.all(ids.map((id) => loadOne(id, signal))), [ids.join()]);
  if (ids.length < 2) return <p>Pick 2 to 10 runs on the <a href={href(`/w/${ws}/runs`)}>runs page</a> and choose Compare.</p>;
  if (data.error) return <ProblemView error={data.error} />;
  if (!data.data) return <Loading what="the runs" />;
  const runs = data.data;
  const known = runs.filter((r) => r.config);
  const keys = [...new Set(known.flatMap((r) => Object.keys(r.config!)))].sort();
  const differing = keys.filter((k) => new Set(known.map((r) => r.config![k] ?? '∅')).size > 1);
  const shown = all ? keys : differing;
  const metricNames = [...new Set(runs.flatMap((r) => r.metrics.map((m) => m.name)))].sort();
  const chosen = loc.value.query.get('m') ?? metricNames[0];
  return (
    <div class="page">
      <h1>Compare {runs.length} runs</h1>
      <Section title="Runs">
        <ul class="plain">
          {runs.map((r) => (
            <li key={r.run.id}>
              <StateBadge state={r.run.state} /> <a href={href(`/runs/${r.run.id}`)}>{r.run.name}</a> <span class="muted small">{r.run.id.slice(0, 8)} · attempts {r.run.attempts?.length ?? 0}</span>
            </li>
          ))}
        </ul>
      </Section>
      <Section
        title={`Config: ${differing.length} of ${keys.length} fields differ${known.length < runs.length ? ` (${runs.length - known.length} run(s) still going: their config is compared once they end)` : ''}`}
        actions={
          <label class="check">
            <input type="checkbox" checked={all} onChange={(e) => setAll((e.target as HTMLInputElement).checked)} /> Show equal fields too
          </label>
        }
      >
        <div class="table-wrap">
          <table class="data">
            <thead>
              <tr>
                <th scope="col">Field</th>
                {runs.map((r) => (
                  <th scope="col" key={r.run.id}>
                    {r.run.name} <span class="muted small">{r.run.id.slice(0, 8)}</span>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {shown.map((k) => (
                <tr key={k} class={differing.includes(k) ? 'diff' : undefined}>
                  <th scope="row">
                    <code>{k}</code>
                  </th>
                  {runs.map((r) => (
                    <td key={r.run.id}>{r.config ? <code class="wrap">{r.config[k] ?? '—'}</code> : <span class="muted">once it ends</span>}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Section>
      <Section title="Metrics">
        {metricNames.length ? (
          <>
            <div class="table-wrap">
              <table class="data">
                <thead>
                  <tr>
                    <th scope="col">Metric</th>
                    {runs.map((r) => (
                      <th scope="col" key={r.run.id}>
                        {r.run.name} <span class="muted small">min / max / latest</span>
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {metricNames.map((n) => (
                    <tr key={n}>
                      <th scope="row">{n}</th>
                      {runs.map((r) => {
                        const m = r.metrics.find((x) => x.name === n);
                        return <td key={r.run.id}>{m ? `${m.min === null ? '—' : fmtNum(m.min)} / ${m.max === null ? '—' : fmtNum(m.max)} / ${m.latest.value ?? m.latest.raw ?? '—'}` : '—'}</td>;
                      })}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <label>
              Chart
              <select value={chosen} onChange={(e) => setQuery({ m: (e.target as HTMLSelectElement).value })}>
                {metricNames.map((n) => (
                  <option key={n} value={n}>
                    {n}
                  </option>
                ))}
              </select>
            </label>
            {chosen ? <Overlay runs={runs} name={chosen} /> : null}
          </>
        ) : (
          <p class="muted">None of these runs reported a metric.</p>
        )}
      </Section>
    </div>
  );
}
