// Experiments (tau.yaml's experiment.project / name / group, as TauGrid's
// tracker groups runs): projects with their experiments and groups, run
// counts and last activity (listExperiments); an experiment's runs, picked
// for a comparison. The chosen experiment and group are URL state; the page
// follows the workspace's run changes.
import { useEffect, useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { useFetch } from '../lib/data';
import { loc, href, navigate } from '../router';
import { useReloadOnChanges } from '../state/changes';
import { ProblemView, Loading, Section, StateBadge, Time, fmtNum } from '../ui/common';
import { RUN_STATES, type Experiment } from '../api/types';

const RUNS_SHOWN = 200;

interface Chosen {
  project: string | null;
  experiment: string;
  group: string | null;
}

function chosenFrom(q: URLSearchParams): Chosen | null {
  const experiment = q.get('experiment');
  if (!experiment) return null;
  return { project: q.get('project'), experiment, group: q.get('group') };
}

function StateSummary({ byState }: { byState: Experiment['by_state'] }) {
  const parts = RUN_STATES.filter((s) => byState[s] > 0);
  return (
    <span class="small">
      {parts.map((s, i) => (
        <span key={s}>
          {i ? ' · ' : ''}
          {s} {fmtNum(byState[s])}
        </span>
      ))}
    </span>
  );
}

function link(ws: string, c: Chosen): string {
  return href(`/w/${ws}/experiments`, { project: c.project, experiment: c.experiment, group: c.group });
}

function ExperimentRuns({ ws, chosen }: { ws: string; chosen: Chosen }) {
  const filters = { ...(chosen.project ? { project: chosen.project } : {}), experiment: chosen.experiment, ...(chosen.group ? { group: chosen.group } : {}) };
  const runs = useFetch((signal) => ok(api.GET('/v1/workspaces/{ws}/runs', { params: { path: { ws }, query: { ...filters, limit: RUNS_SHOWN } }, signal })), [ws, JSON.stringify(filters)]);
  useReloadOnChanges(ws, [runs.reload]);
  const [picked, setPicked] = useState<string[]>([]);
  useEffect(() => setPicked([]), [JSON.stringify(filters)]);
  const toggle = (id: string) => setPicked((p) => (p.includes(id) ? p.filter((x) => x !== id) : [...p, id]));
  const title = `${chosen.project ? chosen.project + ' / ' : ''}${chosen.experiment}${chosen.group ? ' / ' + chosen.group : ''}`;
  return (
    <Section
      title={`Runs of ${title}`}
      actions={
        <div class="actions">
          <a class="button" href={href(`/w/${ws}/runs`, filters)}>
            Open in the runs list
          </a>
          <button type="button" class="primary" disabled={picked.length < 2 || picked.length > 10} onClick={() => navigate(href(`/w/${ws}/compare`, { runs: picked.join(',') }))}>
            Compare {picked.length >= 2 ? picked.length : ''} selected
          </button>
        </div>
      }
    >
      <ProblemView error={runs.error} />
      {!runs.data && !runs.error ? <Loading what="the experiment's runs" /> : null}
      {runs.data ? (
        <div class="table-wrap">
          <table class="data experiment-runs">
            <thead>
              <tr>
                <th scope="col">
                  <span class="sr-only">Select</span>
                </th>
                <th scope="col">Run</th>
                <th scope="col">State</th>
                <th scope="col">Owner</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {runs.data.items.map((r) => (
                <tr key={r.id} class={picked.includes(r.id) ? 'selected' : undefined}>
                  <td>
                    <input type="checkbox" checked={picked.includes(r.id)} onChange={() => toggle(r.id)} aria-label={`Select ${r.name} ${r.id.slice(0, 8)}`} disabled={!picked.includes(r.id) && picked.length >= 10} />
                  </td>
                  <th scope="row">
                    <a href={href(`/runs/${r.id}`)}>{r.name}</a> <span class="muted small">{r.id.slice(0, 8)}</span>
                  </th>
                  <td>
                    <StateBadge state={r.state} />
                  </td>
                  <td>{r.owner}</td>
                  <td>
                    <Time at={r.created_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {runs.data.next_cursor ? <p class="muted small">The newest {RUNS_SHOWN} runs; the runs list has them all.</p> : null}
        </div>
      ) : null}
    </Section>
  );
}

export function Experiments({ ws }: { ws: string }) {
  const list = useFetch(async (signal) => {
    // Every experiment of the workspace, page after page (a project's are few).
    const items: Experiment[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 20; page++) {
      const r = await ok(api.GET('/v1/workspaces/{ws}/experiments', { params: { path: { ws }, query: { limit: 200, ...(cursor ? { cursor } : {}) } }, signal }));
      items.push(...r.items);
      if (!r.next_cursor) break;
      cursor = r.next_cursor;
    }
    return items;
  }, [ws]);
  useReloadOnChanges(ws, [list.reload]);
  const chosen = chosenFrom(loc.value.query);
  const projects = new Map<string, Experiment[]>();
  for (const e of list.data ?? []) {
    const k = e.project ?? '';
    projects.set(k, [...(projects.get(k) ?? []), e]);
  }
  return (
    <div class="page">
      <h1>Experiments in {ws}</h1>
      <ProblemView error={list.error} />
      {!list.data && !list.error ? <Loading what="experiments" /> : null}
      {list.data && !list.data.length ? (
        <p class="muted">
          No run names an experiment yet. A run joins one with <code>experiment.name</code> (and <code>project</code>, <code>group</code>) in its tau.yaml.
        </p>
      ) : null}
      {[...projects.entries()].map(([project, exps]) => (
        <Section key={project} title={project ? `Project ${project}` : 'No project'}>
          <div class="table-wrap">
            <table class="data experiments">
              <thead>
                <tr>
                  <th scope="col">Experiment</th>
                  <th scope="col">Runs</th>
                  <th scope="col">By state</th>
                  <th scope="col">Groups</th>
                  <th scope="col">Last activity</th>
                </tr>
              </thead>
              <tbody>
                {exps.map((e) => {
                  const base = { project: e.project, experiment: e.name, group: null };
                  const current = chosen && chosen.experiment === e.name && chosen.project === e.project;
                  return (
                    <tr key={e.name} class={current ? 'selected' : undefined}>
                      <th scope="row">
                        <a href={link(ws, base)} aria-current={current && !chosen.group ? 'true' : undefined}>
                          {e.name}
                        </a>
                      </th>
                      <td>{fmtNum(e.runs)}</td>
                      <td>
                        <StateSummary byState={e.by_state} />
                      </td>
                      <td>
                        <ul class="inline">
                          {e.groups.map((g) =>
                            g.name === null ? (
                              <li key="">
                                <span class="muted">no group</span> ({g.runs})
                              </li>
                            ) : (
                              <li key={g.name}>
                                <a href={link(ws, { ...base, group: g.name })} aria-current={current && chosen.group === g.name ? 'true' : undefined}>
                                  {g.name}
                                </a>{' '}
                                ({g.runs})
                              </li>
                            ),
                          )}
                        </ul>
                      </td>
                      <td>
                        <Time at={e.last_activity_at} />
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </Section>
      ))}
      {chosen ? <ExperimentRuns ws={ws} chosen={chosen} /> : list.data?.length ? <p class="muted">Choose an experiment or a group to see its runs and compare them.</p> : null}
    </div>
  );
}
