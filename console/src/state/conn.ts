// The connection indicator: live (a stream is connected now), polling (the
// gateway answers but no stream is connected: views poll), or offline (the
// last request found no gateway, or the browser has no network).
import { signal, computed } from '@preact/signals';

const reachable = signal(true);
const online = signal(navigator.onLine);
const streams = signal(0);

addEventListener('online', () => (online.value = true));
addEventListener('offline', () => (online.value = false));

export function noteResponse(ok: boolean): void {
  if (reachable.value !== ok) reachable.value = ok;
}

/** Count a connected stream until the returned function is called. */
export function streamOpened(): () => void {
  streams.value++;
  let closed = false;
  return () => {
    if (!closed) streams.value--;
    closed = true;
  };
}

export const connection = computed<'live' | 'polling' | 'offline'>(() =>
  !reachable.value || !online.value ? 'offline' : streams.value > 0 ? 'live' : 'polling',
);
