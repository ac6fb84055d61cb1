// One admin resource kept by the API's CRUD routes (workspaces, queues,
// members, profiles, flavors, ClusterQueues, priority classes): a list, and
// create / edit as JSON with the API's validation errors shown at their
// field, line and column, and delete with a confirmation.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { rawFetch } from '../../api/client';
import { ApiError } from '../../api/problem';
import { useFetch } from '../../lib/data';
import { ProblemView, Loading, Section } from '../../ui/common';
import { Dialog } from '../../ui/dialog';

type Item = Record<string, unknown>;

export interface CrudProps {
  title: string;
  collection: string;
  keyOf(item: Item): string;
  columns: { label: string; cell(item: Item): ComponentChildren }[];
  template: Item;
  /** Fields that cannot change: left out of the edit form. */
  immutable?: string[];
  extra?(item: Item): ComponentChildren;
}

async function send(method: string, path: string, body?: unknown): Promise<void> {
  await rawFetch(path, { method, headers: body === undefined ? {} : { 'Content-Type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

export function Crud(p: CrudProps) {
  const list = useFetch(
    async (signal) => {
      const items: Item[] = [];
      let cursor = '';
      do {
        const res = await rawFetch(`${p.collection}?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { signal });
        const page = (await res.json()) as { items: Item[]; next_cursor?: string | null };
        items.push(...page.items);
        cursor = page.next_cursor ?? '';
      } while (cursor && items.length < 2000);
      return items;
    },
    [p.collection],
  );
  const [edit, setEdit] = useState<{ key: string | null; text: string } | null>(null);
  const [del, setDel] = useState<string | null>(null);
  const [err, setErr] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  const save = async () => {
    if (!edit) return;
    setErr(undefined);
    let body: unknown;
    try {
      body = JSON.parse(edit.text);
    } catch (x) {
      setErr(new ApiError(400, { type: 'about:blank', title: 'Not JSON', status: 400, detail: String(x), instance: '' }, ''));
      return;
    }
    setBusy(true);
    try {
      if (edit.key === null) await send('POST', p.collection, body);
      else await send('PATCH', `${p.collection}/${encodeURIComponent(edit.key)}`, body);
      setEdit(null);
      list.reload();
    } catch (x) {
      if (x instanceof ApiError) setErr(x);
    } finally {
      setBusy(false);
    }
  };
  const remove = async () => {
    if (del === null) return;
    setBusy(true);
    setErr(undefined);
    try {
      await send('DELETE', `${p.collection}/${encodeURIComponent(del)}`);
      setDel(null);
      list.reload();
    } catch (x) {
      if (x instanceof ApiError) setErr(x);
    } finally {
      setBusy(false);
    }
  };
  const editable = (item: Item) => {
    const o: Item = {};
    for (const [k, v] of Object.entries(item)) if (!['created_at', 'updated_at', ...(p.immutable ?? [])].includes(k)) o[k] = v;
    return JSON.stringify(o, null, 2);
  };
  return (
    <Section
      title={p.title}
      actions={
        <button type="button" class="small primary" onClick={() => { setErr(undefined); setEdit({ key: null, text: JSON.stringify(p.template, null, 2) }); }}>
          New {p.title.replace(/s$/, '').toLowerCase()}
        </button>
      }
    >
      <ProblemView error={list.error} />
      {!list.data && !list.error ? <Loading what={p.title.toLowerCase()} /> : null}
      {list.data?.length ? (
        <div class="table-wrap">
          <table class="data">
            <thead>
              <tr>
                {p.columns.map((c) => (
                  <th scope="col" key={c.label}>
                    {c.label}
                  </th>
                ))}
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((item) => {
                const key = p.keyOf(item);
                return (
                  <tr key={key}>
                    {p.columns.map((c) => (
                      <td key={c.label}>{c.cell(item)}</td>
                    ))}
                    <td class="actions">
                      {p.extra?.(item)}
                      <button type="button" class="small" aria-label={`Edit ${key}`} onClick={() => { setErr(undefined); setEdit({ key, text: editable(item) }); }}>
                        Edit
                      </button>
                      <button type="button" class="small danger" aria-label={`Delete ${key}`} onClick={() => { setErr(undefined); setDel(key); }}>
                        Delete
                      </button>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : list.data ? (
        <p class="muted">None yet.</p>
      ) : null}
      <Dialog
        open={edit !== null}
        title={edit?.key === null ? `New ${p.title.replace(/s$/, '').toLowerCase()}` : `Edit ${edit?.key ?? ''}`}
        onClose={() => setEdit(null)}
        actions={
          <>
            <button type="button" onClick={() => setEdit(null)}>
              Discard
            </button>
            <button type="button" class="primary" disabled={busy} onClick={() => void save()}>
              Save
            </button>
          </>
        }
      >
        <label for="crud-json">As JSON</label>
        <textarea id="crud-json" class="json" rows={14} spellcheck={false} value={edit?.text ?? ''} onInput={(e) => setEdit((x) => (x ? { ...x, text: (e.target as HTMLTextAreaElement).value } : x))} />
        <ProblemView error={err} />
      </Dialog>
      <Dialog
        open={del !== null}
        title={`Delete ${del ?? ''}?`}
        onClose={() => setDel(null)}
        actions={
          <>
            <button type="button" onClick={() => setDel(null)}>
              Keep it
            </button>
            <button type="button" class="danger" disabled={busy} onClick={() => void remove()}>
              Delete
            </button>
          </>
        }
      >
        <p>The API refuses when something still uses it.</p>
        <ProblemView error={err} />
      </Dialog>
    </Section>
  );
}
