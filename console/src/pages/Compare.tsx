// Compare 2–10 runs in one request (compareRuns): the resolved config's
// fields that differ, every metric's summary side by side, each run's
// attempts, and overlaid charts (series reduced on the server).
import { api, ok } from '../api/client';
import { useFetch } from '../lib/data';
import { loc, href, setQuery } from '../router';
import { ProblemView, Loading, Section, StateBadge, fmtNum } from '../ui/common';
import { lazy } from '../ui/lazy';
import { loadPoints, prepare } from './RunMetrics';
import type { ChartProps } from '../charts/Chart';
import type { ComparedRun, MetricSummary } from '../api/types';

const Chart = lazy<ChartProps>(() => import('../charts/Chart').then((m) => m.Chart), 'the chart');

const runLabel = (r: ComparedRun) => `${r.name} ${r.id.slice(0, 8)}`;

function Overlay({ runs, name }: { runs: ComparedRun[]; name: string }) {
  const ids = runs.map((r) => r.id).join();
  const pts = useFetch((signal) => Promise.all(runs.map((r) => loadPoints(r.id, name, signal))), [name, ids]);
  if (pts.error) return <ProblemView error={pts.error} />;
  if (!pts.data) return <Loading what={`${name} points`} />;
  const series = pts.data.map((p, i) => {
    const d = prepare(p);
    return { label: runLabel(runs[i]!), xs: d.xs, ys: d.ys };
  });
  const reduced = pts.data.filter((p) => p.reduced).length;
  return (
    <>
      <Chart title={name} xLabel="step" series={series} />
      {reduced ? <p class="muted small">{reduced} of {runs.length} series reduced on the server (extremes kept).</p> : null}
    </>
  );
}

function summary(m: MetricSummary | undefined): string {
  if (!m) return '—';
  const latest = m.latest.value ?? m.latest.raw ?? '—';
  return `${m.min === null ? '—' : fmtNum(m.min)} / ${m.max === null ? '—' : fmtNum(m.max)} / ${typeof latest === 'number' ? fmtNum(latest) : latest}${m.non_finite ? ` (${m.non_finite} non-finite)` : ''}`;
}

const shown = (v: unknown) => (v === null || v === undefined ? '—' : typeof v === 'string' ? v : JSON.stringify(v));

export function Compare({ ws }: { ws: string }) {
  const ids = [...new Set((loc.value.query.get('runs') ?? '').split(',').filter(Boolean))].slice(0, 10);
  const data = useFetch(
    (signal) =>
      ok(
        api.GET('/v1/workspaces/{ws}/runs:compare', {
          params: { path: { ws }, query: { ids } },
          querySerializer: { array: { style: 'form', explode: false } },
          signal,
        }),
      ),
    [ws, ids.join()],
  );
  if (ids.length < 2)
    return (
      <p>
        Pick 2 to 10 runs on the <a href={href(`/w/${ws}/runs`)}>runs page</a> or in an <a href={href(`/w/${ws}/experiments`)}>experiment</a> and choose Compare.
      </p>
    );
  if (data.error) return <ProblemView error={data.error} />;
  if (!data.data) return <Loading what="the comparison" />;
  const { runs, config_differences: diffs, same_config } = data.data;
  const metricNames = [...new Set(runs.flatMap((r) => r.metrics.map((m) => m.name)))].sort();
  const chosen = loc.value.query.get('m') ?? metricNames[0];
  return (
    <div class="page">
      <h1>Compare {runs.length} runs</h1>
      <Section title="Runs">
        <div class="table-wrap">
          <table class="data">
            <thead>
              <tr>
                <th scope="col">Run</th>
                <th scope="col">State</th>
                <th scope="col">Experiment</th>
                <th scope="col">Attempts</th>
                <th scope="col">Config</th>
              </tr>
            </thead>
            <tbody>
              {runs.map((r) => (
                <tr key={r.id}>
                  <th scope="row">
                    <a href={href(`/runs/${r.id}`)}>{r.name}</a> <span class="muted small">{r.id.slice(0, 8)}</span>
                  </th>
                  <td>
                    <StateBadge state={r.state} />
                  </td>
                  <td>{[r.experiment.project, r.experiment.name, r.experiment.group].filter((x) => x).join(' / ') || '—'}</td>
                  <td>
                    {r.attempts.length}
                    {r.attempts.some((a) => a.retry_reason) ? <span class="muted small"> (retried: {[...new Set(r.attempts.map((a) => a.retry_reason).filter(Boolean))].join(', ')})</span> : null}
                  </td>
                  <td>
                    <code>{r.config_hash.slice(0, 19)}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Section>
      <Section title={same_config ? 'Config: the same in every run' : `Config: ${diffs.length} field${diffs.length === 1 ? '' : 's'} differ`}>
        {diffs.length ? (
          <div class="table-wrap">
            <table class="data config-diff">
              <thead>
                <tr>
                  <th scope="col">Field</th>
                  {runs.map((r) => (
                    <th scope="col" key={r.id}>
                      {runLabel(r)}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {diffs.map((d) => (
                  <tr key={d.path} class="diff">
                    <th scope="row">
                      <code>{d.path}</code>
                    </th>
                    {d.values.map((v, i) => (
                      <td key={runs[i]?.id ?? i}>
                        <code class="wrap">{shown(v)}</code>
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : (
          <p class="muted">Every resolved field is equal{same_config ? ' (same config hash)' : ''}.</p>
        )}
      </Section>
      <Section title="Metrics">
        {metricNames.length ? (
          <>
            <div class="table-wrap">
              <table class="data metric-summaries">
                <thead>
                  <tr>
                    <th scope="col">Metric</th>
                    {runs.map((r) => (
                      <th scope="col" key={r.id}>
                        {runLabel(r)} <span class="muted small">min / max / latest</span>
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {metricNames.map((n) => (
                    <tr key={n}>
                      <th scope="row">{n}</th>
                      {runs.map((r) => (
                        <td key={r.id}>{summary(r.metrics.find((x) => x.name === n))}</td>
                      ))}
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
