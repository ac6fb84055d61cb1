// Small shared pieces: state badges, times, problems, copy buttons, tab links.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError } from '../api/problem';
import { formatTime } from '../state/prefs';
import { href } from '../router';

const TERMINAL = new Set(['Succeeded', 'Failed', 'Cancelled']);
export const isTerminal = (state: string) => TERMINAL.has(state);

/** A run state: text first, colour only as a second cue. */
export function StateBadge({ state }: { state: string }) {
  return <span class={`badge st-${state.toLowerCase()}`}>{state}</span>;
}

export function Time({ at }: { at: string | null | undefined }) {
  if (!at) return <span>—</span>;
  return <time dateTime={at} title={at}>{formatTime(at)}</time>;
}

/** A problem as RFC 9457 gave it: title, detail, errors[] and the request id to quote. */
export function ProblemView({ error, onDismiss }: { error: ApiError | undefined; onDismiss?: () => void }) {
  if (!error) return null;
  const p = error.problem;
  return (
    <div class="problem" role="alert">
      <p>
        <strong>{p.title}</strong> {p.status ? <span class="muted">({p.status})</span> : null}: {p.detail}
      </p>
      {p.errors?.length ? (
        <ul>
          {p.errors.map((d, i) => (
            <li key={i}>
              {d.line ? <code>{`${d.line}:${d.column ?? 1}`}</code> : null} {d.path ? <code>{d.path}</code> : null} {d.message}
            </li>
          ))}
        </ul>
      ) : null}
      {p.instance ? (
        <p class="muted small">
          Request id <code>{p.instance}</code>
        </p>
      ) : null}
      {onDismiss ? (
        <button type="button" class="link" onClick={onDismiss}>
          Dismiss
        </button>
      ) : null}
    </div>
  );
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      class="small"
      onClick={() => {
        void navigator.clipboard.writeText(text).then(() => {
          setDone(true);
          setTimeout(() => setDone(false), 1500);
        });
      }}
    >
      {done ? 'Copied' : label}
    </button>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" role="status">
      Loading {what}…
    </p>
  );
}

export interface TabDef {
  id: string;
  label: string;
}

/** Navigation tabs: each one a link (the tab is part of the URL). */
export function TabLinks({ tabs, current, base, label }: { tabs: TabDef[]; current: string; base: string; label: string }) {
  return (
    <nav class="tabs" aria-label={label}>
      {tabs.map((t) => (
        <a key={t.id} href={href(base + (t.id === tabs[0]!.id ? '' : '/' + t.id))} aria-current={t.id === current ? 'page' : undefined}>
          {t.label}
        </a>
      ))}
    </nav>
  );
}

export function Section({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="card" aria-label={title}>
      <div class="card-head">
        <h2>{title}</h2>
        {actions}
      </div>
      {children}
    </section>
  );
}

/** A bar of `used` against `total` with the numbers in text. */
export function UsageBar({ used, total, label, bytes = false }: { used: number; total: number; label: string; bytes?: boolean }) {
  const pct = total > 0 ? Math.min(100, Math.round((used / total) * 100)) : 0;
  const f = bytes ? fmtBytes : fmtNum;
  return (
    <div class="usage">
      <meter min={0} max={total > 0 ? total : 1} value={Math.min(used, total > 0 ? total : used)} aria-label={label} />
      <span class="small">
        {f(used)} / {f(total)} ({pct}%)
      </span>
    </div>
  );
}

/** Bytes in binary units ("12 Gi"), as Kubernetes quantities read. */
export function fmtBytes(n: number): string {
  const units = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${fmtNum(Math.round(n * 100) / 100)}${units[i] ? ' ' + units[i] : ''}`;
}

/** Whether a resource is counted in bytes. */
export const isBytes = (resource: string) => /memory|storage/.test(resource);

export function fmtNum(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(2);
}

/** Parse a Kubernetes quantity ("500m", "12Gi", "2") into a number, for bars only. */
export function qty(q: string | null | undefined): number {
  if (!q) return 0;
  const m = /^([0-9.]+)([a-zA-Z]*)$/.exec(q.trim());
  if (!m) return Number(q) || 0;
  const mult: Record<string, number> = { '': 1, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4 };
  return Number(m[1]) * (mult[m[2]!] ?? 1);
}
