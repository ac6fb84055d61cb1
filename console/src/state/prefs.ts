// Display preferences (not secrets): theme and time zone, kept in localStorage.
import { signal, effect, computed } from '@preact/signals';

type Theme = 'light' | 'dark' | 'system';
type Zone = 'local' | 'utc';

function stored<T extends string>(key: string, allowed: readonly T[], dflt: T): T {
  const v = localStorage.getItem(key);
  return (allowed as readonly string[]).includes(v ?? '') ? (v as T) : dflt;
}

export const theme = signal<Theme>(stored('taugate.theme', ['light', 'dark', 'system'] as const, 'system'));
export const zone = signal<Zone>(stored('taugate.zone', ['local', 'utc'] as const, 'local'));

/** Whether the dark theme is showing (chosen, or the system's with "system"). */
export const dark = computed(() => theme.value === 'dark' || (theme.value === 'system' && matchMedia('(prefers-color-scheme: dark)').matches));

effect(() => {
  localStorage.setItem('taugate.theme', theme.value);
  document.documentElement.dataset['theme'] = dark.value ? 'dark' : 'light';
});
effect(() => localStorage.setItem('taugate.zone', zone.value));

const fmtLocal = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return zone.value === 'utc' ? d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC') : fmtLocal.format(d);
}

export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}
