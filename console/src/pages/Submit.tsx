// Submit: a tau.yaml editor that validates as you type (every error at its
// line and column), files attached, and an idempotent submit: one key per
// content, so a double click or a retried request makes one run.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ok, rawFetch } from '../api/client';
import { ApiError, type Diagnostic } from '../api/problem';
import { loc, href, navigate } from '../router';
import { ProblemView, Section } from '../ui/common';
import type { ValidationResult } from '../api/types';

const TEMPLATE = `name: hello
engine: job
entrypoint: hello.sh
`;

function b64(buf: ArrayBuffer): string {
  const bytes = new Uint8Array(buf);
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

export function Submit({ ws }: { ws: string }) {
  const clone = loc.value.query.get('clone');
  const [text, setText] = useState(TEMPLATE);
  const [files, setFiles] = useState<Record<string, string>>({});
  const [diags, setDiags] = useState<Diagnostic[]>([]);
  const [valid, setValid] = useState<ValidationResult | null>(null);
  const [checkErr, setCheckErr] = useState<ApiError | undefined>(undefined);
  const [submitErr, setSubmitErr] = useState<ApiError | undefined>(undefined);
  const [checking, setChecking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState('');
  const area = useRef<HTMLTextAreaElement>(null);
  const gutter = useRef<HTMLPreElement>(null);
  const inFlight = useRef(false);
  const fileKey = Object.entries(files)
    .map(([k, v]) => `${k}:${v.length}:${v.slice(0, 16)}`)
    .join('|');
  /** One Idempotency-Key per (spec, files): resubmitting the same content replays the same run. */
  const idemKey = useMemo(() => crypto.randomUUID(), [text, fileKey]);
  const profiles = useMemo(() => ok(api.GET('/v1/workspaces/{ws}/profiles', { params: { path: { ws } } })).catch(() => null), [ws]);
  const [profileNames, setProfileNames] = useState<string[]>([]);
  useEffect(() => {
    void profiles.then((p) => setProfileNames(p ? p.items.map((x) => x.name) : []));
  }, [profiles]);

  useEffect(() => {
    if (!clone) return;
    rawFetch(`/v1/runs/${clone}/evidence`)
      .then((r) => r.json() as Promise<{ record?: { spec?: { text?: string; files?: { name: string }[] } } }>)
      .then((ev) => {
        const t = ev.record?.spec?.text;
        if (t) setText(t);
        const names = ev.record?.spec?.files?.map((f) => f.name) ?? [];
        setNote(names.length ? `Cloned from run ${clone}. Attach its files again: ${names.join(', ')}.` : `Cloned from run ${clone}.`);
      })
      .catch((e: unknown) => setCheckErr(e instanceof ApiError ? e : undefined));
  }, [clone]);

  // Validate as the user types (debounced); the answer for stale text is dropped.
  useEffect(() => {
    const ctl = new AbortController();
    const t = setTimeout(async () => {
      setChecking(true);
      try {
        const res = await rawFetch(`/v1/workspaces/${encodeURIComponent(ws)}/runs:validate`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ spec: text, files }),
          signal: ctl.signal,
        });
        const v = (await res.json()) as ValidationResult;
        setValid(v);
        setDiags(v.warnings ?? []);
        setCheckErr(undefined);
      } catch (e) {
        if (ctl.signal.aborted) return;
        setValid(null);
        if (e instanceof ApiError) {
          setDiags(e.problem.errors ?? []);
          setCheckErr(e);
        }
      } finally {
        if (!ctl.signal.aborted) setChecking(false);
      }
    }, 400);
    return () => {
      clearTimeout(t);
      ctl.abort();
    };
  }, [text, fileKey, ws]);

  const lines = text.split('\n');
  const bad = new Set(diags.filter((d) => d.line).map((d) => d.line!));

  const goTo = (d: Diagnostic) => {
    const el = area.current;
    if (!el || !d.line) return;
    let off = 0;
    for (let i = 0; i < d.line - 1 && i < lines.length; i++) off += lines[i]!.length + 1;
    off += Math.max(0, (d.column ?? 1) - 1);
    el.focus();
    el.setSelectionRange(off, off);
  };

  const submit = async () => {
    if (inFlight.current) return;
    inFlight.current = true;
    setBusy(true);
    setSubmitErr(undefined);
    try {
      const res = await rawFetch(`/v1/workspaces/${encodeURIComponent(ws)}/runs`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Idempotency-Key': idemKey },
        body: JSON.stringify({ spec: text, files }),
      });
      const run = (await res.json()) as { id: string };
      navigate(href(`/runs/${run.id}`));
    } catch (e) {
      if (e instanceof ApiError) {
        setSubmitErr(e);
        if (e.problem.errors?.length) setDiags(e.problem.errors);
      }
    } finally {
      inFlight.current = false;
      setBusy(false);
    }
  };

  const addFiles = async (list: FileList | null) => {
    if (!list) return;
    const next = { ...files };
    for (const f of Array.from(list)) next[f.name] = b64(await f.arrayBuffer());
    setFiles(next);
  };

  const errors = diags.filter(() => !valid);
  return (
    <div class="page">
      <h1>Submit a run to {ws}</h1>
      {note ? <p role="status">{note}</p> : null}
      <div class="submit-grid">
        <div>
          <label for="spec-editor">tau.yaml</label>
          <div class="editor">
            <pre class="gutter" ref={gutter} aria-hidden="true">
              {lines.map((_, i) => (
                <span key={i} class={bad.has(i + 1) ? 'bad' : undefined}>
                  {i + 1}
                  {'\n'}
                </span>
              ))}
            </pre>
            <textarea
              id="spec-editor"
              ref={area}
              spellcheck={false}
              wrap="off"
              value={text}
              aria-describedby="spec-diags"
              aria-invalid={errors.length ? 'true' : 'false'}
              onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
              onScroll={(e) => {
                if (gutter.current) gutter.current.scrollTop = (e.target as HTMLTextAreaElement).scrollTop;
              }}
            />
          </div>
          <div class="file-row">
            <label for="spec-files">Files the spec names</label>
            <input id="spec-files" type="file" multiple onChange={(e) => void addFiles((e.target as HTMLInputElement).files)} />
            {Object.keys(files).length ? (
              <ul class="chips" aria-label="Attached files">
                {Object.keys(files).map((n) => (
                  <li key={n}>
                    <button
                      type="button"
                      class="chip"
                      aria-label={`Remove file ${n}`}
                      onClick={() => {
                        const f = { ...files };
                        delete f[n];
                        setFiles(f);
                      }}
                    >
                      {n} ×
                    </button>
                  </li>
                ))}
              </ul>
            ) : null}
          </div>
          <button type="button" class="primary" onClick={() => void submit()} disabled={busy}>
            {busy ? 'Submitting…' : 'Submit run'}
          </button>
          <ProblemView error={submitErr} />
        </div>
        <div id="spec-diags" aria-live="polite">
          <Section title={checking ? 'Checking…' : valid ? 'Valid' : 'Problems'}>
            {valid ? (
              <p class="verdict good">✓ The spec is valid. Config hash <code class="wrap">{valid.config_hash}</code></p>
            ) : checkErr ? (
              <p>
                <strong>{checkErr.problem.title}</strong>: {checkErr.problem.detail} <span class="muted small">(request {checkErr.requestId})</span>
              </p>
            ) : null}
            {diags.length ? (
              <ul class="diags">
                {diags.map((d, i) => (
                  <li key={i} class={valid ? 'warn' : 'err'}>
                    <button type="button" class="link" onClick={() => goTo(d)}>
                      {d.line ? `line ${d.line}, column ${d.column ?? 1}` : d.path || 'document'}
                    </button>
                    : {d.message} {d.path ? <code>{d.path}</code> : null}
                  </li>
                ))}
              </ul>
            ) : null}
          </Section>
          {profileNames.length ? (
            <Section title="Profiles you may use">
              <p class="small">{profileNames.join(', ')}</p>
            </Section>
          ) : null}
          {valid ? (
            <Section title="What it would create">
              <p class="small">
                {valid.manifests.length} object(s): {valid.manifests.map((m) => `${String(m['kind'] ?? '')} ${String((m['metadata'] as { name?: string } | undefined)?.name ?? '')}`).join(', ')}
              </p>
            </Section>
          ) : null}
        </div>
      </div>
    </div>
  );
}
