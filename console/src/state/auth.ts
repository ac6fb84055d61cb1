// The bearer token: kept in memory, or in sessionStorage when the user asks
// ("remember in this tab"); never in localStorage, never in a URL.
import { signal, computed } from '@preact/signals';

const SESSION_KEY = 'taugate.token';

export const token = signal<string | null>(sessionStorage.getItem(SESSION_KEY));
/** Set when the gateway answered 401 to a request made with the token. */
export const expired = signal(false);

export interface Me {
  admin: boolean;
  workspaces: { name: string; role: string }[];
}
export const me = signal<Me | null>(null);
export const isAdmin = computed(() => me.value?.admin ?? false);

export function signIn(t: string, remember: boolean): void {
  token.value = t;
  expired.value = false;
  if (remember) sessionStorage.setItem(SESSION_KEY, t);
  else sessionStorage.removeItem(SESSION_KEY);
}

export function signOut(): void {
  token.value = null;
  me.value = null;
  sessionStorage.removeItem(SESSION_KEY);
}

export function authHeaders(): Record<string, string> {
  return token.value ? { Authorization: `Bearer ${token.value}` } : {};
}
