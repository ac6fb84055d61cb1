// The connection indicator: live (a stream is open), polling, or offline
// (the last request found no gateway).
import { signal, computed } from '@preact/signals';

const reachable = signal(true);
const streams = signal(0);

export function noteResponse(ok: boolean): void {
  if (reachable.value !== ok) reachable.value = ok;
}
export function streamOpened(): () => void {
  streams.value++;
  let closed = false;
  return () => {
    if (!closed) streams.value--;
    closed = true;
  };
}

export const connection = computed<'live' | 'polling' | 'offline'>(() =>
  !reachable.value ? 'offline' : streams.value > 0 ? 'live' : 'polling',
);
